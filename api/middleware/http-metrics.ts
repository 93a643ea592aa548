import type Koa from 'koa';
import { metrics, statusClass } from '../../services/metrics.ts';

/**
 * RED metrics of the API (services/metrics.ts): each request counted and timed by method, route
 * template (`unmatched` for an unknown path, so a scan cannot grow the label set) and status class.
 */
export function httpMetrics(): Koa.Middleware {
  return async function httpMetrics(ctx, next) {
    const stopTimer = metrics.httpDuration.startTimer();
    try {
      await next();
    } finally {
      const labels = { method: ctx.method, route: (ctx as { _matchedRoute?: string })._matchedRoute ?? 'unmatched', status_class: statusClass(ctx.status) };
      stopTimer(labels);
      metrics.httpRequests.inc(labels);
    }
  };
}
