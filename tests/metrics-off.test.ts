// Metrics off means off: a process whose configuration serves no metrics (METRICS_PORT unset, as for
// `npm start`) records none, per request or otherwise. (tests/observability.test.ts scrapes them on.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfigOrExit } from '../runtime/boot.ts';
import { metrics, registry } from '../services/metrics.ts';
import { startTestApp, type TestApp } from './support/test-app.ts';

let app: TestApp;
beforeAll(async () => {
  delete process.env.METRICS_PORT;
  loadConfigOrExit(); // what every entry point does first
  app = await startTestApp();
});
afterAll(() => app.close());

describe('with no METRICS_PORT', () => {
  it('nothing records: no request is counted or timed, and no other metric moves', async () => {
    for (const path of ['/health', '/v1/nothing-here', '/openapi.json']) await (await fetch(`${app.url}${path}`)).arrayBuffer();
    metrics.runsCreated.inc();
    metrics.toolDuration.labels({ tool: 'webhook_delivery' }).observe(1);
    const text = await registry.metrics();
    expect(text).not.toMatch(/^gws_http_requests_total\{/m);
    expect(text).not.toMatch(/^gws_http_request_duration_seconds_count\{/m);
    expect(text).toMatch(/^gws_runs_created_total 0$/m);
    expect(text).not.toMatch(/^gws_tool_call_duration_seconds_count\{/m);
  });
});
