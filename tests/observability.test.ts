// Tracing end to end: an API process and a worker process (bin/api.ts, bin/worker.ts) export over OTLP/HTTP
// to a collector this test runs, which keeps what it receives in memory. One run's spans share one
// trace from the HTTP request through workflow start, the workflow and every activity to settle,
// with database spans inside; and no span carries the run's input or the approver's reason.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openPostgres } from '../db/client.ts';
import { setWebhookUrl } from '../services/tenants.ts';
import { ApiClient } from './support/client.ts';
import { webhookReceiver } from './support/fake-servers.ts';
import { freePort } from './support/free-port.ts';
import { serviceEnv } from './support/service-env.ts';
import { isTerminal, newTenant, waitForRun } from './support/run-stack.ts';
import { until } from './support/until.ts';

interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: { key: string; value: Record<string, unknown> }[];
  /** Everything the collector received for this span, as text: what the content scan reads. */
  raw: string;
}

/** An OTLP/HTTP (JSON) trace collector that keeps every span it receives. */
async function memoryCollector() {
  const spans: ExportedSpan[] = [];
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
      resourceSpans?: { scopeSpans?: { spans?: Omit<ExportedSpan, 'raw'>[] }[] }[];
    };
    for (const rs of body.resourceSpans ?? [])
      for (const ss of rs.scopeSpans ?? []) for (const s of ss.spans ?? []) spans.push({ ...s, raw: JSON.stringify(s) });
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans, close: () => new Promise((r) => server.close(r)) };
}

const children: ChildProcess[] = [];
let collector: Awaited<ReturnType<typeof memoryCollector>>;
let apiUrl: string;
const metricsPorts = { api: 0, worker: 0, temporal: 0 };
const logs = { api: '', worker: '' };
const taskQueue = `otel-${randomBytes(4).toString('hex')}`;

function spawnTraced(entry: 'api' | 'worker', env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', `bin/${entry}.ts`], {
    env: serviceEnv({
      TASK_QUEUE: taskQueue,
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_SERVICE_NAME: `gws-${entry}`,
      // Export within a fifth of a second, so the test waits on spans, not on the batch timer.
      OTEL_BSP_SCHEDULE_DELAY: '200',
      // Every trace (the default keeps 10 %): the standard variable is honoured.
      OTEL_TRACES_SAMPLER: 'parentbased_always_on',
      ...env,
    }),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  child.stdout!.setEncoding('utf8').on('data', (text: string) => (logs[entry] += text));
  children.push(child);
  return child;
}

beforeAll(async () => {
  collector = await memoryCollector();
  const port = await freePort();
  apiUrl = `http://127.0.0.1:${port}`;
  metricsPorts.api = await freePort();
  metricsPorts.worker = await freePort();
  metricsPorts.temporal = await freePort();
  spawnTraced('api', { PORT: String(port), METRICS_PORT: String(metricsPorts.api), LOG_LEVEL: 'info', DATABASE_POOL_SIZE: '2' });
  spawnTraced('worker', { METRICS_PORT: String(metricsPorts.worker), TEMPORAL_METRICS_PORT: String(metricsPorts.temporal) });
  await until(async () => (await fetch(`${apiUrl}/health`).catch(() => null))?.status === 200, 'the traced API to answer', { withinMs: 60_000 });
  const metricsUp = (port: number) =>
    fetch(`http://127.0.0.1:${port}/metrics`).then(
      (r) => r.ok,
      () => false,
    );
  await until(() => metricsUp(metricsPorts.worker), 'the worker to serve its metrics', { withinMs: 60_000 });
});
afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  await Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : null)));
  await collector?.close();
});

/** The value of a series in a scrape (0 when absent), e.g. `gws_runs_ended_total{state="completed"}`. */
function seriesValue(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}
const scrape = async (port: number) => await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();

const stringValue = (span: ExportedSpan, key: string) => span.attributes.find((a) => a.key === key)?.value.stringValue;

describe('one run, one trace', () => {
  it('runs from the HTTP request through the workflow and every activity to settle, with database spans, and carries no content', {
    timeout: 180_000,
  }, async () => {
    const database = openPostgres(inject('databaseUrl'), 2);
    const hook = await webhookReceiver();
    try {
      const t = await newTenant(database.db);
      const marker = `marker-${randomBytes(6).toString('hex')}`;
      // The tenant's webhook URL is the tenant's: its path (a token, often) appears in no span either.
      await setWebhookUrl(database.db, t.name, `${hook.url}-${marker}`, { allowLoopback: true });
      const api = await ApiClient.connect(apiUrl);
      const beforeApi = await scrape(metricsPorts.api);
      const beforeWorker = await scrape(metricsPorts.worker);
      const created = await api.post('/v1/agent-runs', { input: `Tell the team channel that the release notes ${marker} are out.` }, { key: t.key });
      expect(created.status).toBe(201);
      // The response names its trace, beside the request id.
      const traceparent = created.headers.get('traceparent')!;
      expect(traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
      expect(created.headers.get('x-request-id')).toBeTruthy();
      const traceId = traceparent.split('-')[1]!;
      // The request's log line carries both ids.
      const requestId = created.headers.get('x-request-id')!;
      const logged = await until(() => logs.api.split('\n').find((l) => l.includes(`"request_id":"${requestId}"`)), 'the request log line');
      expect(JSON.parse(logged)).toMatchObject({ request_id: requestId, trace_id: traceId });
      // A traceparent sent in is continued: the answer names the same trace.
      const incoming = `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01`;
      const continued = await fetch(`${apiUrl}/v1/models`, { headers: { authorization: `Bearer ${t.key}`, traceparent: incoming } });
      expect(continued.headers.get('traceparent')?.split('-')[1]).toBe(incoming.split('-')[1]);
      const runId = created.json.run_id as string;
      await waitForRun(api, t.key, runId, (r) => r.status === 'awaiting_approval', 60_000);
      const reason = `reason-${marker}`;
      expect((await api.post(`/v1/agent-runs/${runId}/approval`, { decision: 'approve', reason }, { key: t.approverKey })).status).toBe(200);
      const run = await waitForRun(api, t.key, runId, isTerminal, 60_000);
      expect(run.status).toBe('completed');

      const inTrace = () => collector.spans.filter((s) => s.traceId.toLowerCase() === traceId);
      // The workflow's own span ends, and is exported, when the workflow does.
      const arrived = (name: string) => inTrace().some((s) => s.name === name);
      await until(() => arrived('RunActivity:settleRun') && arrived('RunWorkflow:agentRunWorkflow'), 'the settle and workflow spans', { withinMs: 30_000 });
      const names = new Set(inTrace().map((s) => s.name));
      expect([...names]).toEqual(
        expect.arrayContaining([
          'POST /v1/agent-runs',
          'StartWorkflow:agentRunWorkflow',
          'RunWorkflow:agentRunWorkflow',
          'RunActivity:estimateRun',
          'RunActivity:reserveCredits',
          'RunActivity:runTool',
          'RunActivity:settleRun',
          'execute_tool webhook_delivery',
        ]),
      );
      const http = inTrace().find((s) => s.name === 'POST /v1/agent-runs')!;
      expect(stringValue(http, 'http.route')).toBe('/v1/agent-runs');
      expect(stringValue(http, 'gws.request_id')).toBe(created.headers.get('x-request-id'));
      // Database queries inside the trace, by statement name, never their text.
      const queries = inTrace().filter((s) => s.name.startsWith('pg.query'));
      expect(queries.length).toBeGreaterThan(0);
      expect(queries.every((q) => stringValue(q, 'db.statement') === undefined)).toBe(true);

      // Content-free: the input and the approver's reason appear in no span of either process.
      expect(collector.spans.filter((s) => s.raw.includes(marker))).toEqual([]);

      // The metrics moved: HTTP and runs on the API's port, the run's life and the Temporal SDK's on the worker's.
      const afterApi = await scrape(metricsPorts.api);
      const afterWorker = await until(async () => {
        const text = await scrape(metricsPorts.worker);
        return seriesValue(text, 'gws_runs_ended_total{state="completed"}') > seriesValue(beforeWorker, 'gws_runs_ended_total{state="completed"}')
          ? text
          : null;
      }, 'the worker to count the run');
      const moved = (before: string, after: string, series: string) => seriesValue(after, series) - seriesValue(before, series);
      expect(moved(beforeApi, afterApi, 'gws_http_requests_total{method="POST",route="/v1/agent-runs",status_class="2xx"}')).toBe(1);
      expect(moved(beforeApi, afterApi, 'gws_runs_created_total')).toBe(1);
      expect(afterApi).toMatch(/^gws_credits\{movement="settled",tenant_class="customer",use="run"\} \d+/m);
      expect(afterApi).toMatch(/^gws_approvals_waiting \d+/m);
      expect(moved(beforeWorker, afterWorker, 'gws_approval_wait_seconds_count')).toBe(1);
      expect(moved(beforeWorker, afterWorker, 'gws_run_state_duration_seconds_count{state="awaiting_approval"}')).toBe(1);
      expect(moved(beforeWorker, afterWorker, 'gws_tool_calls_total{tool="webhook_delivery",outcome="done"}')).toBe(1);
      expect(afterWorker).toMatch(/^temporal_\w+/m);
      // Bounded labels: no tenant, no run, no content.
      for (const text of [afterApi, afterWorker]) {
        expect(text).not.toContain(t.tenantId);
        expect(text).not.toContain(runId);
        expect(text).not.toContain(marker);
      }
    } finally {
      await hook.close();
      await database.close();
    }
  });
});

describe('what is never traced', () => {
  it('/health and /metrics make no span, whatever the sampler; the request after them does; /health is still counted', async () => {
    const healthy = 'gws_http_requests_total{method="GET",route="/health",status_class="2xx"}';
    const before = seriesValue(await scrape(metricsPorts.api), healthy);
    for (let i = 0; i < 5; i++) {
      await (await fetch(`${apiUrl}/health`)).arrayBuffer();
      await (await fetch(`${apiUrl}/health?probe=${i}`)).arrayBuffer();
      await scrape(metricsPorts.api);
    }
    const after = await fetch(`${apiUrl}/v1/models`);
    const traceId = after.headers.get('traceparent')!.split('-')[1]!;
    await until(() => collector.spans.some((s) => s.traceId.toLowerCase() === traceId), 'the span of the request after them');
    const target = (s: ExportedSpan) => String(stringValue(s, 'http.target') ?? stringValue(s, 'url.path') ?? '');
    expect(collector.spans.filter((s) => /health|metrics/.test(s.name) || /^\/(health|metrics)/.test(target(s)))).toEqual([]);
    // Answered before the request log (api/routes/health.ts healthProbe), a healthy /health is counted all the same.
    expect(seriesValue(await scrape(metricsPorts.api), healthy) - before).toBe(10);
  });
});

describe('database spans', () => {
  it('belong to the request that made the query, when requests wait for a pooled connection another request releases', { timeout: 60_000 }, async () => {
    const database = openPostgres(inject('databaseUrl'), 2);
    try {
      const t = await newTenant(database.db);
      const read = () => fetch(`${apiUrl}/v1/agent-runs?limit=5`, { headers: { authorization: `Bearer ${t.key}` } });
      // The key is looked up once, then cached: every read below makes the same queries.
      await (await read()).arrayBuffer();
      // Twenty reads at once on the API's pool of two: most wait for a connection that another read releases.
      const responses = await Promise.all(
        Array.from({ length: 20 }, async () => {
          const res = await read();
          await res.arrayBuffer();
          expect(res.status).toBe(200);
          const [, traceId, spanId] = res.headers.get('traceparent')!.split('-');
          return { traceId: traceId!, spanId: spanId! };
        }),
      );
      const ofTrace = (traceId: string) => collector.spans.filter((s) => s.traceId.toLowerCase() === traceId);
      await until(() => responses.every((r) => ofTrace(r.traceId).some((s) => s.name === 'GET /v1/agent-runs')), 'the twenty server spans');
      const queriesPerRequest = responses.map((r) => {
        const queries = ofTrace(r.traceId).filter((s) => s.name.startsWith('pg.query'));
        // Each under its own request's server span; a query made in another request's context would
        // sit under that request's span, in its trace, and leave its own short of one.
        expect(queries.map((q) => q.parentSpanId?.toLowerCase())).toEqual(queries.map(() => r.spanId));
        // The rate limiter's lease refills come and go; the route's own queries are the same for every read.
        return queries.filter((q) => !q.name.startsWith('pg.query:rate_limits')).length;
      });
      expect(Math.min(...queriesPerRequest)).toBeGreaterThan(0);
      expect(new Set(queriesPerRequest).size).toBe(1);
    } finally {
      await database.close();
    }
  });
});
