import { context, trace } from '@opentelemetry/api';
import { getRPCMetadata, RPCType } from '@opentelemetry/core';
import type Koa from 'koa';

/**
 * Links the request's trace (the HTTP server span, when tracing is on) with the request id: the
 * response carries `traceparent` beside `x-request-id`, the span the request id, and the span is
 * named by the route template (`POST /v1/agent-runs`, never the path with its ids or query).
 * A `traceparent` the client sent is honoured by the HTTP instrumentation: the span continues it.
 */
export function traceContext(): Koa.Middleware {
  return async function traceContext(ctx, next) {
    const span = trace.getActiveSpan();
    if (!span) return await next();
    const { traceId, spanId, traceFlags } = span.spanContext();
    ctx.set('traceparent', `00-${traceId}-${spanId}-${traceFlags.toString(16).padStart(2, '0')}`);
    span.setAttribute('gws.request_id', String(ctx.state.requestId));
    try {
      await next();
    } finally {
      const route = (ctx as { _matchedRoute?: string })._matchedRoute;
      if (route) {
        const metadata = getRPCMetadata(context.active());
        if (metadata?.type === RPCType.HTTP) metadata.route = route;
        span.setAttribute('http.route', route);
        span.updateName(`${ctx.method} ${route}`);
      }
    }
  };
}
