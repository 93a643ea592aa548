// Durability: concurrent duplicate creates across two API processes, and a
// worker killed with SIGKILL in the middle of execute. Real processes, real
// Temporal, real Postgres.
import { type ChildProcess, spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import { eq } from 'drizzle-orm';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../config/env.ts';
import { localTemporal } from '../config/temporal-connection-settings.ts';
import { runs } from '../db/schema.ts';
import { activityDeps } from '../runtime/compose-activities.ts';
import { startWorker } from '../runtime/worker.ts';
import { setWebhookUrl } from '../services/tenants.ts';
import { ApiClient } from './support/client.ts';
import { freePort } from './support/free-port.ts';
import { isTerminal, ledgerOf, newTenant, waitForRun } from './support/run-stack.ts';
import { serviceEnv } from './support/service-env.ts';
import { startTestApp } from './support/test-app.ts';
import { testCodec, testDataConverter } from './support/payload-codec.ts';

const children: ChildProcess[] = [];
let connection: Connection;
let temporal: Client;

function spawnService(entry: 'api' | 'worker', env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', `bin/${entry}.ts`], {
    env: serviceEnv({ RATE_LIMIT_POINTS: '100000', ...env }),
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(child);
  return child;
}

async function waitForHealth(url: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      if ((await fetch(`${url}/health`)).status === 200) return;
    } catch {}
    if (Date.now() > deadline) throw new Error(`${url} never became healthy`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

beforeAll(async () => {
  connection = await Connection.connect({ address: inject('temporalAddress') });
  temporal = new Client({ connection, dataConverter: testDataConverter() });
});
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  await Promise.all(children.map((c) => (c.exitCode === null && c.signalCode === null ? new Promise((r) => c.once('exit', r)) : null)));
  await connection.close();
});

describe('20 concurrent identical creates over two API processes', () => {
  it('make one run, one workflow, one hold and one charge', async () => {
    const taskQueue = `dup-${Date.now()}`;
    const ports = [await freePort(), await freePort()];
    for (const port of ports) spawnService('api', { PORT: String(port), TASK_QUEUE: taskQueue });
    const urls = ports.map((p) => `http://127.0.0.1:${p}`);
    await Promise.all(urls.map(waitForHealth));
    const helper = await startTestApp({ TASK_QUEUE: taskQueue });
    const db = helper.database.db;
    const worker = await startWorker({
      temporal: localTemporal(inject('temporalAddress')),
      taskQueue,
      activities: activityDeps(loadConfig({}), db),
      payloadCodec: testCodec(),
      logger: pino({ level: 'silent' }),
      workflowBundlePath: inject('workflowBundlePath'),
      versioning: loadConfig({}).temporal.versioning,
    });
    try {
      const t = await newTenant(db);
      const clients = await Promise.all(urls.map((u) => ApiClient.connect(u)));
      const body = { input: 'Reconcile the March payouts; then list mismatches.', memory: false };
      const replies = await Promise.all(
        Array.from({ length: 20 }, (_, i) => clients[i % 2]!.post('/v1/agent-runs', body, { key: t.key, headers: { 'idempotency-key': 'same-key' } })),
      );
      const ids = new Set(replies.map((r) => r.json.run_id));
      expect(ids.size).toBe(1);
      expect(replies.filter((r) => r.status === 201)).toHaveLength(1);
      expect(replies.filter((r) => r.status === 200)).toHaveLength(19);
      const runId = [...ids][0] as string;

      const run = await waitForRun(clients[0]!, t.key, runId, isTerminal);
      expect(run.status).toBe('needs_attention'); // ran to the end; the local provider performs no analysis
      expect(await db.select({ id: runs.id }).from(runs).where(eq(runs.tenantId, t.tenantId))).toHaveLength(1);
      const { holds, charges } = await ledgerOf(db, runId);
      expect(holds).toHaveLength(1);
      expect(charges).toHaveLength(1);

      // Temporal's visibility is eventually consistent: wait for the count to settle.
      let executions: string[] = [];
      for (let i = 0; i < 50; i++) {
        executions = [];
        for await (const wf of temporal.workflow.list({ query: `TenantId = '${t.tenantId}'` })) executions.push(wf.runId);
        if (executions.length > 0) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(executions).toHaveLength(1);
    } finally {
      await worker.stop();
      await helper.close();
    }
  });
});

/** A webhook that records each delivery's Idempotency-Key; `answer` decides, per delivery number, whether and when to answer. */
async function holdingWebhook(answer: (n: number, res: http.ServerResponse) => void) {
  const deliveries: string[] = [];
  let firstArrived!: () => void;
  const arrived = new Promise<void>((r) => (firstArrived = r));
  const hook = http.createServer((req, res) => {
    deliveries.push(String(req.headers['idempotency-key']));
    req.resume();
    firstArrived();
    answer(deliveries.length, res);
  });
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(hook.address() as AddressInfo).port}/`,
    deliveries,
    arrived,
    close: async () => {
      hook.closeAllConnections();
      await new Promise((r) => hook.close(r));
    },
  };
}

/**
 * An approved run whose webhook delivery is in flight on a worker process (started with `workerEnv`):
 * returns once the first delivery has arrived at the webhook.
 */
async function deliveryInFlight(taskQueue: string, hookUrl: string, arrived: Promise<void>, workerEnv: Record<string, string> = {}) {
  const app = await startTestApp({ TASK_QUEUE: taskQueue });
  const db = app.database.db;
  const api = await ApiClient.connect(app.url);
  const t = await newTenant(db);
  await setWebhookUrl(db, t.name, hookUrl, { allowLoopback: true });
  const worker = spawnService('worker', { TASK_QUEUE: taskQueue, ...workerEnv });
  // Delivery only, so that the run can complete on the local provider.
  const created = await api.post('/v1/agent-runs', { input: 'Tell the status page that the outage review is done.' }, { key: t.key });
  const runId = created.json.run_id as string;
  await waitForRun(api, t.key, runId, (r) => r.status === 'awaiting_approval', 50_000);
  expect((await api.post(`/v1/agent-runs/${runId}/approval`, { decision: 'approve' }, { key: t.approverKey })).status).toBe(200);
  await arrived;
  return { app, db, api, t, runId, worker };
}

describe('a worker killed with SIGKILL during execute', () => {
  it('is replaced, and the run completes with exactly one charge', async () => {
    // The webhook never answers the first delivery, so execute is provably mid-flight when the worker dies.
    const hook = await holdingWebhook((n, res) => n > 1 && res.writeHead(204).end());
    const taskQueue = `kill-${Date.now()}`;
    const { app, db, api, t, runId, worker } = await deliveryInFlight(taskQueue, hook.url, hook.arrived);
    try {
      expect((await api.get(`/v1/agent-runs/${runId}`, { key: t.key })).json.status).toBe('executing');
      worker.kill('SIGKILL');
      await new Promise((r) => worker.once('exit', r));
      expect(worker.signalCode).toBe('SIGKILL');
      spawnService('worker', { TASK_QUEUE: taskQueue });

      const run = await waitForRun(api, t.key, runId, isTerminal, 90_000);
      expect(run.status).toBe('completed');
      expect(run.receipt.action_boundary.effects_performed).toEqual(['webhook_delivery:step_1']);
      const { holds, charges } = await ledgerOf(db, runId);
      expect(holds).toHaveLength(1);
      expect(holds[0]!.status).toBe('settled');
      expect(charges).toHaveLength(1);
      expect(charges[0]!.amount).toBe(run.usage.charged);
      // The retried delivery carried the same idempotency key, so the receiver can deduplicate it.
      expect(hook.deliveries.length).toBeGreaterThanOrEqual(2);
      expect(new Set(hook.deliveries)).toEqual(new Set([`${runId}:step_1`]));
    } finally {
      await hook.close();
      await app.close();
    }
  }, 180_000); // waits up to 50 s for approval and 90 s for the end
});

describe('a worker stopped with SIGTERM during a delivery', () => {
  it('lets the in-flight delivery finish within the grace time, exits cleanly, and nothing is sent twice', async () => {
    // The webhook answers only after the worker has been told to stop.
    const hook = await holdingWebhook((_n, res) => setTimeout(() => res.writeHead(204).end(), 2_000));
    const taskQueue = `drain-${Date.now()}`;
    const { app, db, api, t, runId, worker } = await deliveryInFlight(taskQueue, hook.url, hook.arrived, { WORKER_SHUTDOWN_GRACE_MS: '10000' });
    try {
      const stoppedAt = Date.now();
      worker.kill('SIGTERM');
      await new Promise((r) => worker.once('exit', r));
      expect(worker.exitCode).toBe(0);
      expect(Date.now() - stoppedAt).toBeGreaterThan(1_500); // it waited for the delivery's answer
      spawnService('worker', { TASK_QUEUE: taskQueue });

      const run = await waitForRun(api, t.key, runId, isTerminal, 50_000);
      expect(run.status).toBe('completed');
      expect(run.receipt.action_boundary.effects_performed).toEqual(['webhook_delivery:step_1']);
      expect(hook.deliveries).toEqual([`${runId}:step_1`]);
      expect((await ledgerOf(db, runId)).charges).toHaveLength(1);
    } finally {
      await hook.close();
      await app.close();
    }
  }, 130_000); // waits up to 50 s twice
});

describe('the money path under retries', () => {
  // The worker dies after the ledger write committed but before Temporal heard of it, so the
  // activity runs again (after its 30 s start-to-close timeout) on a fresh worker.
  it.concurrent.for(['reserveCredits', 'settleRun'])(
    'a worker killed right after %s committed: the retry holds once and charges once',
    { timeout: 150_000 },
    async (activity, { expect }) => {
      const taskQueue = `money-${activity}-${Date.now()}`;
      const app = await startTestApp({ TASK_QUEUE: taskQueue });
      try {
        const db = app.database.db;
        const api = await ApiClient.connect(app.url);
        const t = await newTenant(db);
        const crashing = spawn(process.execPath, ['--import', 'tsx', 'tests/support/crashing-worker.ts'], {
          env: serviceEnv({ TASK_QUEUE: taskQueue, CRASH_AFTER_ACTIVITY: activity }),
          stdio: ['ignore', 'ignore', 'inherit'],
        });
        children.push(crashing);
        const created = await api.post('/v1/agent-runs', { input: 'Review the vendor terms; then list the renewal dates.' }, { key: t.key });
        const runId = created.json.run_id as string;
        await new Promise((r) => crashing.once('exit', r));
        expect(crashing.signalCode).toBe('SIGKILL');
        // The effect is already in the ledger; only Temporal does not know it yet.
        const before = await ledgerOf(db, runId);
        expect(before.holds).toHaveLength(1);
        expect(before.charges).toHaveLength(activity === 'settleRun' ? 1 : 0);

        spawnService('worker', { TASK_QUEUE: taskQueue });
        const run = await waitForRun(api, t.key, runId, isTerminal, 100_000);
        expect(run.status).toBe('needs_attention'); // settled to the end; nothing performed locally
        const { holds, charges } = await ledgerOf(db, runId);
        expect(holds.map((h) => h.status)).toEqual(['settled']);
        expect(charges.map((c) => c.amount)).toEqual([run.usage.charged]);
        expect(holds[0]!.amount).toBe(run.estimate.amounts.total);
      } finally {
        await app.close();
      }
    },
  );
});
