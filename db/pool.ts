// The node-postgres pools of the service (the database's and the Postgres rate-limit store's), each
// query inside a recorded trace with a span of its own: `pg.query:<statement name>` (or the
// statement's first keyword), its database and outcome, never its text or parameters.
//
// Made here rather than by OpenTelemetry's pg instrumentation, which made two spans a query (the
// pool's connect and the query), set a dozen attributes on each and updated the pool's gauges on
// every acquire and release, sampled or not: a traced read cost about twice what this one span does
// (bench row 7, 2026-11-27, in git history). A query outside a recorded trace costs one context lookup.
import { type Attributes, context, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import pg from 'pg';

// Looked up once (getTracer builds a key and searches a map on each call); the proxy it returns
// follows the provider registered later, as tests register theirs.
const tracer = trace.getTracer('governed-workspace-service.db');

/** The span's name: the prepared statement's name, else the statement's first keyword (SELECT, BEGIN…). */
function spanName(query: unknown): string {
  const config = typeof query === 'string' ? { text: query } : ((query ?? {}) as { name?: unknown; text?: unknown });
  if (typeof config.name === 'string' && config.name) return `pg.query:${config.name}`;
  const keyword = typeof config.text === 'string' ? /^\s*([a-z]+)/i.exec(config.text)?.[1] : undefined;
  return `pg.query:${keyword?.toUpperCase() ?? 'QUERY'}`;
}

/** A span for this query when the caller is inside a recorded trace; none otherwise. */
function startQuerySpan(query: unknown, attributes: Attributes): Span | undefined {
  if (!trace.getSpan(context.active())?.isRecording()) return undefined;
  return tracer.startSpan(spanName(query), { kind: SpanKind.CLIENT, attributes });
}

function endQuerySpan(span: Span, err: unknown): void {
  // The error's class only: pg's messages can quote the query's parameters.
  if (err) span.setStatus({ code: SpanStatusCode.ERROR }).setAttribute('error.type', (err as Error).name ?? 'Error');
  span.end();
}

type Query = (this: pg.Client, ...args: unknown[]) => unknown;
/** A cursor or stream (`submit`), or a config with a callback of its own (`callback`): answered their own way, not timed here. */
const answersItsOwnWay = (query: unknown) => {
  const config = query as { submit?: unknown; callback?: unknown } | null;
  return typeof config?.submit === 'function' || typeof config?.callback === 'function';
};

/** pg.Client, its queries traced: the promise form and the callback form (pool.query's). */
function tracedClientClass(attributes: Attributes): typeof pg.Client {
  const query = pg.Client.prototype.query as unknown as Query;
  class TracedClient extends pg.Client {}
  (TracedClient.prototype as unknown as { query: Query }).query = function tracedQuery(...args) {
    const span = answersItsOwnWay(args[0]) ? undefined : startQuerySpan(args[0], attributes);
    if (!span) return query.apply(this, args);
    const last = args.length - 1;
    const callback = args[last];
    if (typeof callback === 'function') {
      args[last] = (err: unknown, result: unknown) => {
        endQuerySpan(span, err);
        callback(err, result);
      };
      return query.apply(this, args);
    }
    const result = query.apply(this, args) as Promise<unknown>;
    result.then(
      () => endQuerySpan(span, undefined),
      (err: unknown) => endQuerySpan(span, err),
    );
    return result;
  };
  return TracedClient;
}

/**
 * A pool whose queries are traced. `pool.query` runs its statement in the callback of the pool's
 * connect, which another request's release may call: that callback is bound to its caller's
 * context, so the query's span has the right parent.
 */
export function newPool(config: pg.PoolConfig): pg.Pool {
  const database = databaseName(config);
  const attributes: Attributes = { 'db.system': 'postgresql', ...(database ? { 'db.name': database } : {}) };
  // Connections are kept, not closed after 10 s idle: pg-pool arms a timer on every release to close
  // them, one more timer per query.
  // A pool is at most `max` (10) connections; one the server drops is removed on its error.
  const pool = new pg.Pool({ idleTimeoutMillis: 0, ...config, Client: tracedClientClass(attributes) });
  const connect = pool.connect.bind(pool) as (callback?: (...args: unknown[]) => void) => unknown;
  (pool as unknown as { connect: typeof connect }).connect = (callback) => {
    if (typeof callback !== 'function') return connect();
    const active = context.active();
    return connect(trace.getSpan(active)?.isRecording() ? context.bind(active, callback) : callback);
  };
  return pool;
}

function databaseName(config: pg.PoolConfig): string | undefined {
  if (config.database) return config.database;
  if (!config.connectionString) return undefined;
  try {
    return decodeURIComponent(new URL(config.connectionString).pathname.slice(1)) || undefined;
  } catch {
    return undefined;
  }
}
