import type Koa from 'koa';
import type { Logger } from 'pino';
import { recordsMetrics, requestMetrics } from '../../services/metrics.ts';

/**
 * One log line per request: id, method, route pattern, status and latency (a 503 at debug); and
 * the same request in the HTTP metrics (services/request-metrics.ts), every one of them.
 * Never bodies, query strings or headers, so no customer content or credential reaches the logs.
 * A route that asks for it (`logFailuresOnly`: /health) is logged only when it fails.
 */
export function requestLog(logger: Logger): Koa.Middleware {
  // Nothing serves metrics (metrics off): nothing is recorded, not even a lookup per request.
  const metrics = recordsMetrics() ? requestMetrics : undefined;
  const record = (ctx: Koa.Context, started: number) => {
    const status = ctx.status;
    const route = (ctx as { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
    const elapsedMs = performance.now() - started;
    metrics?.observe(ctx.method, route, status, elapsedMs / 1000);
    if (status < 400 && ctx.state.logFailuresOnly === true) return;
    const line = { request_id: ctx.state.requestId as string, method: ctx.method, route, status, latency_ms: Math.round(elapsedMs * 10) / 10 };
    // A 503 is a dependency down, which the outage log reports once per outage (services/outage-log.ts).
    if (status === 503) logger.debug(line, 'request');
    else if (status >= 500) logger.error(line, 'request');
    else logger.info(line, 'request');
  };
  // Not async: one promise per request rather than an async function's and its await's (every
  // promise costs more once tracing's promise hooks run: runtime/promise-context-manager.ts).
  return function requestLog(ctx, next) {
    const started = performance.now();
    // For what logs after the response is committed (a stream failing part-way).
    ctx.state.logger = logger;
    return next().then(
      () => record(ctx, started),
      (err: unknown) => {
        record(ctx, started);
        throw err;
      },
    );
  };
}
