// The API's request metrics are kept by hand (services/request-metrics.ts) for speed: a scrape must
// read exactly what prom-client's own Counter and Histogram would have printed for the same requests.
import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { RequestMetrics } from '../services/request-metrics.ts';

const BOUNDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];
const NAMES = { counter: 't_requests_total', counterHelp: 'Requests.', histogram: 't_duration_seconds', histogramHelp: 'Time.' };

/** [method, route, status, seconds]: bucket edges exactly, above the last bound, a made-up method, classes. */
const REQUESTS: [string, string, number, number][] = [
  ['GET', '/health', 200, 0.0004],
  ['GET', '/health', 200, 0.005],
  ['GET', '/health', 204, 0.0051],
  ['GET', '/health', 503, 0.01],
  ['POST', '/v1/agent-runs', 201, 0.3],
  ['POST', '/v1/agent-runs', 409, 2.5],
  ['BREW', 'unmatched', 404, 0.001],
  ['PURGE', 'unmatched', 404, 0.002],
  ['GET', '/v1/agent-runs/:run_id', 200, 1],
];

describe('request metrics', () => {
  it('scrape as prom-client Counter and Histogram would, for the same requests', async () => {
    const ours = new Registry();
    const metrics = new RequestMetrics(NAMES, BOUNDS);
    metrics.register(ours);

    const theirs = new Registry();
    const labelNames = ['method', 'route', 'status_class'] as const;
    const counter = new Counter({ name: NAMES.counter, help: NAMES.counterHelp, labelNames, registers: [theirs] });
    const histogram = new Histogram({ name: NAMES.histogram, help: NAMES.histogramHelp, labelNames, buckets: BOUNDS, registers: [theirs] });

    for (const [method, route, status, seconds] of REQUESTS) {
      metrics.observe(method, route, status, seconds);
      const labels = { method: ['GET', 'POST'].includes(method) ? method : 'OTHER', route, status_class: `${Math.floor(status / 100)}xx` };
      counter.inc(labels);
      histogram.observe(labels, seconds);
    }
    const text = await ours.metrics();
    expect(text).toBe(await theirs.metrics());
    // One series for both made-up methods, and the 200 and 204 counted together.
    expect(text).toMatch(/^t_requests_total\{method="OTHER",route="unmatched",status_class="4xx"\} 2$/m);
    expect(text).toMatch(/^t_requests_total\{method="GET",route="\/health",status_class="2xx"\} 3$/m);
  });
});
