// `npm run bench`: measures, in one run against one Temporal dev server,
//  (a) raw Temporal client start rate of a trivial workflow vs POST /v1/agent-runs rate,
//  (b) create→completed latency of a no-approval run vs a bare workflow running
//      the same number of no-op activities,
//  (c) GET /v1/agent-runs/{id} latency at fixed concurrency,
// and writes a JSON report to bench-results/. API, worker and load generator
// share this process (and the machine's 2 cores), so read the ratios first.
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode } from '@temporalio/worker';
import pg from 'pg';
import { pino } from 'pino';
import { createApp } from '../api/app.ts';
import { listen } from '../api/server.ts';
import { loadConfig } from '../config/env.ts';
import { openPostgres } from '../db/client.ts';
import { activityDeps } from '../runtime/compose-activities.ts';
import { composeApi } from '../runtime/compose-api.ts';
import { projectRoot } from '../runtime/paths.ts';
import { serviceDataConverter } from '../runtime/payload-codec.ts';
import { payloadCodecFor, resolvePayloadKeyring } from '../runtime/payload-keys.ts';
import { lazyTemporalClient } from '../runtime/temporal-client.ts';
import { resolveTemporalCli, startDevServer } from '../runtime/temporal-dev-server.ts';
import { startWorker } from '../runtime/worker.ts';
import { createKey } from '../services/keys.ts';
import { grantCredits } from '../services/ledger.ts';
import { freePort } from '../tests/support/free-port.ts';
import type { probeWorkflow } from '../workflows/probe.ts';

const N_STARTS = Number(process.env.BENCH_STARTS ?? 200);
const N_LATENCY = Number(process.env.BENCH_LATENCY_RUNS ?? 30);
const N_GETS = Number(process.env.BENCH_GETS ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 10);
const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const RUN_INPUT = 'Review the supplier contracts for renewal risk; then list the three largest obligations.';

const quiet = pino({ level: 'silent' });

function percentile(sorted: number[], p: number): number {
  const i = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return Math.round(sorted[Math.max(0, i)]! * 100) / 100;
}

function summary(ms: number[]) {
  const s = [...ms].sort((a, b) => a - b);
  return { n: s.length, p50_ms: percentile(s, 50), p99_ms: percentile(s, 99), max_ms: percentile(s, 100) };
}

/** Runs `task` `total` times with `concurrency` in flight; returns per-call latencies and the rate. */
async function load(total: number, concurrency: number, task: (i: number) => Promise<void>) {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const i = next++;
        const t0 = performance.now();
        await task(i);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { latencies, perSecond: Math.round((total / seconds) * 10) / 10 };
}

const temporalServer = await startDevServer({
  cliPath: await resolveTemporalCli(process.env.TEMPORAL_CLI),
  port: await freePort(),
  uiPort: await freePort(),
  namespace: 'default',
  logger: quiet,
});
const dbName = `gws_bench_${randomBytes(4).toString('hex')}`;
const admin = new pg.Client({ connectionString: ADMIN_URL });
await admin.connect();
await admin.query(`CREATE DATABASE "${dbName}"`);
const dbUrl = new URL(ADMIN_URL);
dbUrl.pathname = `/${dbName}`;

const config = loadConfig({
  NODE_ENV: 'production',
  LOG_LEVEL: 'silent',
  DATABASE_URL: dbUrl.toString(),
  TEMPORAL_ADDRESS: temporalServer.address,
  TASK_QUEUE: 'bench',
  RATE_LIMIT_POINTS: '10000000',
  // A key of this run: payloads are encrypted as in production, for the API and the raw client alike.
  PAYLOAD_KEY: randomBytes(32).toString('base64'),
});
const codec = payloadCodecFor(resolvePayloadKeyring(config, { allowDataDirKey: false }));
const database = openPostgres(config.database.url!, 20);
await database.migrate();
const bundleFile = path.join(projectRoot, 'bench-results', 'workflow-bundle.js');
mkdirSync(path.dirname(bundleFile), { recursive: true });
writeFileSync(bundleFile, (await bundleWorkflowCode({ workflowsPath: path.join(projectRoot, 'workflows', 'index.ts'), logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} } as never })).code);
const worker = await startWorker({
  address: temporalServer.address,
  namespace: 'default',
  taskQueue: 'bench',
  activities: activityDeps(config, database.db),
  payloadCodec: codec,
  logger: quiet,
  workflowBundlePath: bundleFile,
});
const handle = lazyTemporalClient(temporalServer.address, 'default', codec);
const server = await listen(createApp(composeApi(config, quiet, database, handle)), '127.0.0.1', 0);
const connection = await Connection.connect({ address: temporalServer.address });
const client = new Client({ connection, dataConverter: serviceDataConverter(codec) });
const key = await createKey(database.db, { tenant: 'bench', kind: 'core' });
await grantCredits(database.db, { tenantId: key.tenantId, amount: 100_000_000, entryKey: 'bench-grant' });
const auth = { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' };

async function createRun(): Promise<string> {
  const res = await fetch(`${server.url}/v1/agent-runs`, { method: 'POST', headers: auth, body: JSON.stringify({ input: RUN_INPUT }) });
  if (res.status !== 201) throw new Error(`create answered ${res.status}`);
  return ((await res.json()) as { run_id: string }).run_id;
}

try {
  // (a) start rates
  const started: string[] = [];
  const rawStarts = await load(N_STARTS, CONCURRENCY, async (i) => {
    const id = `bench-start-${i}-${randomBytes(3).toString('hex')}`;
    await client.workflow.start<typeof probeWorkflow>('probeWorkflow', { taskQueue: 'bench', workflowId: id, args: [0] });
    started.push(id);
  });
  const apiStarts = await load(N_STARTS, CONCURRENCY, async () => {
    started.push(await createRun());
  });

  // (b) end-to-end latency, sequential, once every workflow of (a) has finished
  await Promise.all(started.map((id) => client.workflow.getHandle(id).result()));
  const sampleRun = await createRun();
  await client.workflow.getHandle(sampleRun).result();
  const history = await client.workflow.getHandle(sampleRun).fetchHistory();
  const activityCount = (history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes).length;
  const runLatency = await load(N_LATENCY, 1, async () => {
    const id = await createRun();
    await client.workflow.getHandle(id).result();
  });
  const bareLatency = await load(N_LATENCY, 1, async () => {
    await client.workflow.execute<typeof probeWorkflow>('probeWorkflow', { taskQueue: 'bench', workflowId: `bench-bare-${randomBytes(4).toString('hex')}`, args: [activityCount] });
  });

  // (c) read latency at fixed concurrency
  const reads = await load(N_GETS, CONCURRENCY, async () => {
    const res = await fetch(`${server.url}/v1/agent-runs/${sampleRun}`, { headers: auth });
    if (res.status !== 200) throw new Error(`get answered ${res.status}`);
    await res.arrayBuffer();
  });

  const run = summary(runLatency.latencies);
  const bare = summary(bareLatency.latencies);
  const report = {
    at: new Date().toISOString(),
    machine: { cpus: (await import('node:os')).cpus().length, node: process.version },
    note: 'API, worker and load generator share one process; Temporal dev server and Postgres run on the same machine.',
    a_start_rate: {
      concurrency: CONCURRENCY,
      n: N_STARTS,
      raw_temporal_starts_per_s: rawStarts.perSecond,
      api_creates_per_s: apiStarts.perSecond,
      ratio_api_to_raw: Math.round((apiStarts.perSecond / rawStarts.perSecond) * 1000) / 1000,
    },
    b_create_to_completed: {
      activities_per_run: activityCount,
      agent_run: run,
      bare_workflow_same_activity_count: bare,
      ratio_p50: Math.round((run.p50_ms / bare.p50_ms) * 1000) / 1000,
      ratio_p99: Math.round((run.p99_ms / bare.p99_ms) * 1000) / 1000,
    },
    c_get_run: { concurrency: CONCURRENCY, ...summary(reads.latencies), per_s: reads.perSecond },
  };
  const out = path.join(projectRoot, 'bench-results', `bench-${report.at.replace(/[:.]/g, '-')}.json`);
  writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
  console.log(JSON.stringify(report, null, 2));
  console.log(`report: ${path.relative(projectRoot, out)}`);
} finally {
  await server.close();
  await worker.stop();
  await connection.close();
  await handle.close();
  await database.close();
  await admin.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
  await admin.end();
  await temporalServer.stop();
}
