import type Koa from 'koa';
import type { Logger } from 'pino';

/**
 * One log line per request: id, method, route pattern, status and latency (a 503 at debug).
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
        // A 503 is a dependency down, which the outage log reports once per outage (services/outage-log.ts).
        if (status === 503) logger.debug(line, 'request');
        else if (status >= 500) logger.error(line, 'request');
        else logger.info(line, 'request');
      }
    }
  };
}
