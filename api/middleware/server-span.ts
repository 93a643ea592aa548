import { type Context, context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type Koa from 'koa';

/** Paths never traced: probes and scrapes, many per second, with nothing to follow. */
const UNTRACED_PATHS = new Set(['/health', '/metrics']);

/** Whether an incoming request is traced at all (decided before any span, context or attribute is made). */
export function isTracedRequest(url: string | undefined): boolean {
  if (!url) return true;
  const query = url.indexOf('?');
  return !UNTRACED_PATHS.has(query === -1 ? url : url.slice(0, query));
}

const READS = new Set(['GET', 'HEAD']);

/** How a new trace is sampled when this process uses our default sampler and propagators (runtime/telemetry.ts). */
export interface HeadSampling {
  /** The share of new traces recorded. */
  ratio: number;
  /** Where the draw travels in the context to the sampler: true records, false drops. */
  decisionKey: symbol;
}

/**
 * The context a request's span starts in, or undefined for a read that is not traced. With head
 * sampling (our default sampler and propagators) a request that brings no trace context is drawn
 * here, before any header is parsed or id made: about 2.7 µs a request on this machine's 2 cores,
 * most of a dropped read's tracing cost. The draw travels to the sampler in the context, so a kept
 * request is recorded and a dropped write still carries its unsampled decision to the workflow.
 */
function parentContext(ctx: Koa.Context, head: HeadSampling | undefined): Context | undefined {
  const headers = ctx.req.headers;
  if (!head || headers.traceparent !== undefined || headers.baggage !== undefined) return propagation.extract(ROOT_CONTEXT, headers);
  const kept = Math.random() < head.ratio;
  if (!kept && READS.has(ctx.method)) return undefined;
  return ROOT_CONTEXT.setValue(head.decisionKey, kept);
}

/**
 * The HTTP server span, made by the framework instead of by patching node:http (the HTTP
 * instrumentation's incoming side is off: runtime/telemetry.ts), so a request pays only for
 * what it is traced for:
 * - /health and /metrics: nothing at all, not even a context;
 * - any other request: a span continuing the client's `traceparent` (W3C), sampled by the SDK's
 *   sampler (a new trace under our default sampler is drawn first: `parentContext`); its attributes
 *   are set only when it is recorded, and a GET or HEAD it does not record runs without a trace
 *   context at all (a write keeps the unsampled decision for the workflow it starts).
 * A recorded request's response carries `traceparent` beside `x-request-id`: the trace to look up.
 * One the sampler dropped carries none, since no trace of it exists to look up. The span is named by the route
 * template (`POST /v1/agent-runs`, never the path with its ids or query) and carries the request id.
 * A streamed answer's span ends when the stream starts, as its duration metric does.
 */
export function serverSpan(head?: HeadSampling): Koa.Middleware {
  // Looked up once: the provider is registered before the app is built (runtime/telemetry-register.ts).
  const tracer = trace.getTracer('governed-workspace-service.http');
  return function serverSpan(ctx, next) {
    if (!isTracedRequest(ctx.req.url)) return next();
    const parent = parentContext(ctx, head);
    if (!parent) return next();
    const span = tracer.startSpan(ctx.method, { kind: SpanKind.SERVER }, parent);
    const recording = span.isRecording();
    // A read the sampler dropped runs without a context: it starts no work elsewhere that would need
    // the decision passed on, and its database queries find no parent, so they make no spans either.
    if (!recording && READS.has(ctx.method)) return next();
    if (recording) {
      const { traceId, spanId, traceFlags } = span.spanContext();
      ctx.set('traceparent', `00-${traceId}-${spanId}-${traceFlags.toString(16).padStart(2, '0')}`);
      span.setAttributes({ 'http.request.method': ctx.method, 'gws.request_id': String(ctx.state.requestId) });
    }
    return context.with(trace.setSpan(parent, span), async () => {
      try {
        await next();
      } finally {
        if (recording) {
          const route = (ctx as { _matchedRoute?: string })._matchedRoute;
          if (route) {
            span.setAttribute('http.route', route);
            span.updateName(`${ctx.method} ${route}`);
          }
          span.setAttribute('http.response.status_code', ctx.status);
          if (ctx.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        }
        span.end();
      }
    });
  };
}
