import type Koa from 'koa';
import type { Logger } from 'pino';

/**
 * One log line per request: id, method, route pattern, status and latency.
 * Never bodies, query strings or headers, so no customer content or credential reaches the logs.
 * A route that asks for it (`logFailuresOnly`: /health) is logged only when it fails.
 */
export function requestLog(logger: Logger): Koa.Middleware {
  return async function requestLog(ctx, next) {
    const started = performance.now();
    // For what logs after the response is committed (a stream failing part-way).
    ctx.state.logger = logger;
    try {
      await next();
    } finally {
      const status = ctx.status;
      if (status >= 400 || ctx.state.logFailuresOnly !== true) {
        const line = {
          request_id: ctx.state.requestId as string,
          method: ctx.method,
          route: (ctx as { _matchedRoute?: string })._matchedRoute ?? 'unmatched',
          status,
          latency_ms: Math.round((performance.now() - started) * 10) / 10,
        };
        if (status >= 500) logger.error(line, 'request');
        else logger.info(line, 'request');
      }
    }
  };
}
