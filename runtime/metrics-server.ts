// GET /metrics in Prometheus' text format, on a port of its own (METRICS_PORT), apart from the API
// so it is never behind the API's auth, rate limits or load balancer. A worker process appends the
// Temporal SDK's own metrics (Core's exporter, on TEMPORAL_METRICS_PORT), so one scrape has both.
import http from 'node:http';
import type { Logger } from 'pino';
import { collectDefaultMetrics } from 'prom-client';
import { registry } from '../services/metrics.ts';

export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

let defaultsCollected = false;

export async function startMetricsServer(options: { port: number; host: string; temporalMetricsUrl?: string; logger: Logger }): Promise<MetricsServer> {
  // prom-client's process and Node.js metrics (CPU, memory, event loop lag, GC) watch the process
  // all the time: only a process that serves metrics pays for them.
  if (!defaultsCollected) collectDefaultMetrics({ register: registry });
  defaultsCollected = true;
  const server = http.createServer(async (req, res) => {
    if (req.method !== 'GET' || req.url !== '/metrics') return void res.writeHead(404).end();
    try {
      let text = await registry.metrics();
      if (options.temporalMetricsUrl) {
        const temporal = await fetch(options.temporalMetricsUrl, { signal: AbortSignal.timeout(2_000) }).then(
          (r) => (r.ok ? r.text() : ''),
          () => '',
        );
        text += `\n${temporal}`;
      }
      res.writeHead(200, { 'content-type': registry.contentType }).end(text);
    } catch (err) {
      options.logger.warn({ err: (err as Error).name }, 'metrics scrape failed');
      res.writeHead(500).end();
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, resolve);
  });
  return {
    url: `http://${options.host}:${options.port}/metrics`,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
