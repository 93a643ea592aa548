// Hot queries are built once per database handle and sent as named prepared statements:
// building a Drizzle query costs about 100 µs of CPU per request (more than the Postgres round
// trip it describes), and a named statement is parsed and planned once per connection.
import * as drizzle from 'drizzle-orm';
import pg from 'pg';
import type { Db } from './client.ts';

/**
 * `build(db)` once per handle (the service's database, or a transaction's), cached for the
 * handle's lifetime. The statement name must be unique per query text across the service.
 * (services/ledger.ts keeps its per-handle batchers the same way.)
 */
export function preparedPer<T>(build: (db: Db) => T): (db: Db) => T {
  const cache = new WeakMap<Db, T>();
  return (db) => {
    let query = cache.get(db);
    if (query === undefined) {
      query = build(db);
      cache.set(db, query);
    }
    return query;
  };
}

/**
 * A JSON value for a `${placeholder}::jsonb` parameter: serialised here, so an absent or null value is
 * SQL NULL (a placeholder through a jsonb column's own mapping would be JSON null).
 */
export function jsonbParam(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value);
}

/** What drizzle's node-postgres prepared query holds (its own fields, absent from its types). */
interface NodePgPrepared {
  client: pg.Pool;
  queryConfig: pg.QueryArrayConfig;
  params: unknown[];
  fields: unknown;
  joinsNotNullableMap: unknown;
}

type MapResultRow = (fields: unknown, row: unknown[], joinsNotNullableMap: unknown) => unknown;
/** drizzle's own row mapper (exported, though not typed): the same column mapping `execute` applies. */
const mapResultRow = (drizzle as unknown as { mapResultRow?: MapResultRow }).mapResultRow;

/** The prepared query as node-postgres runs it, or undefined (PGlite; a drizzle whose query no longer looks like this). */
function onNodePg(prepared: object): NodePgPrepared | undefined {
  const q = prepared as Partial<NodePgPrepared>;
  if (!(q.client instanceof pg.Pool) || !Array.isArray(q.params)) return undefined;
  return q.queryConfig?.rowMode === 'array' && q.fields !== undefined ? (q as NodePgPrepared) : undefined;
}

/**
 * The rows of a prepared select, as its `execute` gives them. On node-postgres the statement drizzle
 * prepared (name, text, parameters, type parsers) goes through the pool's callback API and each row
 * through drizzle's own mapper: `execute` wraps that one call in five async functions (two no-op
 * tracing spans and a query cache this service does not use), nine promises a read instead of one,
 * and with tracing on each runs its context manager's promise hooks (docs/performance.md, row 7). Anywhere else,
 * `execute` itself.
 */
export function selectRows<T>(prepared: { execute(values: Record<string, unknown>): Promise<T[]> }, values: Record<string, unknown>): Promise<T[]> {
  const q = onNodePg(prepared);
  if (!q || !mapResultRow) return prepared.execute(values);
  return new Promise((resolve, reject) => {
    q.client.query({ ...q.queryConfig, values: drizzle.fillPlaceholders(q.params, values) }, (err, result) => {
      if (err) reject(err);
      else resolve(result.rows.map((row) => mapResultRow(q.fields, row, q.joinsNotNullableMap) as T));
    });
  });
}
