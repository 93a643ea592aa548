import { metrics, statusClass } from '../../services/metrics.ts';

type Series = { count: () => void; observe: (seconds: number) => void };

/** Any other method a client makes up counts as OTHER: a label set no request can grow. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * RED metrics of the API (services/metrics.ts): each request counted and timed by method, route
 * template (`unmatched` for an unknown path, so a scan cannot grow the label set) and status class.
 * Called by the request log middleware, which times every request already: no middleware of its
 * own, and each labelled series is looked up once per combination (both showed on /health).
 */
export function httpMetricsRecorder(): (method: string, route: string, status: number, seconds: number) => void {
  const series = new Map<string, Series>();
  const seriesOf = (method: string, route: string, status: number): Series => {
    const key = `${method} ${route} ${status}`;
    let found = series.get(key);
    if (!found) {
      const labels = { method, route, status_class: statusClass(status) };
      const counter = metrics.httpRequests.labels(labels);
      const histogram = metrics.httpDuration.labels(labels);
      found = { count: () => counter.inc(), observe: (seconds) => histogram.observe(seconds) };
      series.set(key, found);
    }
    return found;
  };
  return (method, route, status, seconds) => {
    const s = seriesOf(METHODS.has(method) ? method : 'OTHER', route, status);
    s.count();
    s.observe(seconds);
  };
}
