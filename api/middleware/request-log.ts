import type Koa from 'koa';
import type { Logger } from 'pino';

/**
 * One log line per request: id, method, route pattern, status and latency.
 * Never bodies, query strings or headers, so no customer content or credential reaches the logs.
 * A route that asks for it (`logFailuresOnly`: /health) is logged only when it fails.
 */
export function requestLog(logger: Logger): Koa.Middleware {
  return async function requestLog(ctx, next) {
    const started = process.hrtime.bigint();
    // For what logs after the response is committed (a stream failing part-way).
    ctx.state.logger = logger;
    try {
      await next();
    } finally {
      const latencyMs = Number(process.hrtime.bigint() - started) / 1e6;
      const status = ctx.status;
      const line = {
        request_id: ctx.state.requestId as string,
        method: ctx.method,
        route: (ctx as { _matchedRoute?: string })._matchedRoute ?? 'unmatched',
        status,
        latency_ms: Math.round(latencyMs * 10) / 10,
      };
      if (status >= 500) logger.error(line, 'request');
      else if (status >= 400 || ctx.state.logFailuresOnly !== true) logger.info(line, 'request');
    }
  };
}
