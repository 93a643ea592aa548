// The reconciler repairs rows whose workflow never started: the API died
// between its insert and the start, or Temporal was down and a keyed client
// gave up. It runs against a database of its own, so it cannot touch the rows
// other test files leave behind on purpose.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { and, eq, sql } from 'drizzle-orm';
import { Client, Connection } from '@temporalio/client';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openPostgres } from '../db/client.ts';
import { runs } from '../db/schema.ts';
import { reconcileScheduleId, ensureReconcileSchedule } from '../runtime/schedules.ts';
import { runWorkflowExists } from '../services/run-workflow.ts';
import { getRun } from '../services/runs.ts';
import { freePort } from './support/free-port.ts';
import { ApiClient } from './support/client.ts';
import { storedRun, isTerminal, newTenant, type RunStack, startRunStack, waitForRun } from './support/run-stack.ts';
import { startTestApp } from './support/test-app.ts';
import { until } from './support/until.ts';
import { serviceProcessEnv, testDataConverter } from './support/payload-codec.ts';
import { untilStarted } from './support/until-started.ts';

let stack: RunStack;
let connection: Connection;
let temporal: Client;
let databaseUrl: string;
const dbName = `gws_reconcile_${randomBytes(4).toString('hex')}`;

function adminQuery(sql: string) {
  const admin = new pg.Client({ connectionString: inject('databaseUrl') });
  return admin
    .connect()
    .then(() => admin.query(sql))
    .finally(() => admin.end());
}

beforeAll(async () => {
  await adminQuery(`CREATE DATABASE "${dbName}"`);
  const url = new URL(inject('databaseUrl'));
  url.pathname = `/${dbName}`;
  databaseUrl = url.toString();
  const database = openPostgres(databaseUrl);
  await database.migrate();
  await database.close();
  stack = await startRunStack({ DATABASE_URL: databaseUrl, RECONCILE_GRACE_SECONDS: '1' });
  connection = await Connection.connect({ address: inject('temporalAddress') });
  temporal = new Client({ connection, dataConverter: testDataConverter() });
});
afterAll(async () => {
  await stack.close();
  await connection.close();
  await adminQuery(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
});

/**
 * Ages a tenant's runs past RECONCILE_GRACE_SECONDS (1 s here): the reconciler leaves a younger row
 * to the API request still starting it. Moved back in time rather than waited for.
 */
async function pastGrace(tenantId: string) {
  await stack.app.database.db
    .update(runs)
    .set({ createdAt: sql`${runs.createdAt} - interval '5 seconds'` as unknown as Date })
    .where(eq(runs.tenantId, tenantId));
}

const reconcile = () =>
  temporal.workflow.execute('reconcileRunsWorkflow', { taskQueue: stack.taskQueue, workflowId: `reconcile-${randomBytes(4).toString('hex')}` }) as Promise<{
    checked: number;
    started: string[];
    markedFailed: string[];
  }>;

describe('the reconciler', () => {
  it('starts a keyed row whose workflow never started, ends a keyless one start_failed, and leaves started workflows alone', async () => {
    const db = stack.app.database.db;
    const t = await newTenant(db);
    // As the API leaves them when it dies between its insert and the start:
    const keyed = await storedRun(db, t.tenantId, 'Summarise the release notes. Version 2 adds search.', 'crashed-after-insert');
    const keyless = await storedRun(db, t.tenantId, 'Summarise the release notes. Version 2 adds search.');
    // A run whose workflow did start, on a queue no worker polls: its row stays accepted, and must stay untouched.
    const idle = await startTestApp({ DATABASE_URL: databaseUrl, TASK_QUEUE: `idle-${randomBytes(3).toString('hex')}` });
    let waiting: string;
    try {
      const created = await (await ApiClient.connect(idle.url)).post('/v1/agent-runs', { input: 'Outline the plan. The launch moved to May.' }, { key: t.key });
      expect(created.status).toBe(201);
      waiting = created.json.run_id;
    } finally {
      await idle.close();
    }
    await pastGrace(t.tenantId);
    const outcome = await reconcile();
    expect(outcome.started).toEqual([keyed.id]);
    expect(outcome.markedFailed).toEqual([keyless.id]);
    expect(outcome.checked).toBe(3);

    const run = await waitForRun(stack.api, t.key, keyed.id, isTerminal);
    expect(run.status).toBe('needs_attention'); // ran to its end; summarising needs a model
    expect(run.receipt).not.toBeNull();
    expect((await getRun(db, t.tenantId, keyless.id))!.failure).toMatchObject({ code: 'start_failed' });
    expect((await getRun(db, t.tenantId, waiting))!.status).toBe('accepted');
    await temporal.workflow.getHandle(waiting).terminate('test cleanup');

    // Nothing left to repair: a second pass changes nothing.
    const again = await reconcile();
    expect([again.started, again.markedFailed]).toEqual([[], []]);
  });

  it('repairs a run whose API process was SIGKILLed between its insert and the workflow start', { timeout: 120_000 }, async () => {
    // A Temporal address that accepts connections and never answers: the API blocks right after its insert.
    const blackHole = net.createServer(() => {});
    await new Promise<void>((r) => blackHole.listen(0, '127.0.0.1', r));
    const port = await freePort();
    const api = spawn(process.execPath, ['--import', 'tsx', 'bin/api.ts'], {
      env: serviceProcessEnv({
        PORT: String(port),
        DATABASE_URL: databaseUrl,
        TEMPORAL_ADDRESS: `127.0.0.1:${(blackHole.address() as net.AddressInfo).port}`,
        TASK_QUEUE: stack.taskQueue,
      }),
      stdio: 'ignore',
    });
    try {
      const db = stack.app.database.db;
      const t = await newTenant(db);
      const url = `http://127.0.0.1:${port}`;
      // The process finishes starting (tsx on a loaded 2-core machine has taken over 10 s): /health then
      // answers 503 for Temporal, not "starting".
      await untilStarted(url);
      const reply = fetch(`${url}/v1/agent-runs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json', 'idempotency-key': 'killed-mid-create' },
        body: JSON.stringify({ input: 'Summarise the incident review. The outage lasted an hour.' }),
      }).catch((err: Error) => err);
      const row = await until(
        async () =>
          (
            await db
              .select()
              .from(runs)
              .where(and(eq(runs.tenantId, t.tenantId), eq(runs.idempotencyKey, 'killed-mid-create')))
          )[0],
        'the run row the API inserted',
        { everyMs: 20 },
      );
      api.kill('SIGKILL');
      expect(await reply).toBeInstanceOf(Error); // the client never got an answer
      expect(await runWorkflowExists(temporal, row.id)).toBe(false);

      await pastGrace(t.tenantId);
      expect((await reconcile()).started).toEqual([row.id]);
      const run = await waitForRun(stack.api, t.key, row.id, isTerminal);
      expect(run.status).toBe('needs_attention'); // ran to its end; summarising needs a model
      expect(run.receipt).not.toBeNull();
      // The client's retry with its key reads the same run and creates nothing.
      const retried = await stack.api.post(
        '/v1/agent-runs',
        { input: 'Summarise the incident review. The outage lasted an hour.' },
        { key: t.key, headers: { 'idempotency-key': 'killed-mid-create' } },
      );
      expect([retried.status, retried.json.run_id]).toEqual([200, row.id]);
    } finally {
      if (api.exitCode === null && api.signalCode === null) api.kill('SIGKILL');
      blackHole.close();
    }
  });

  it('lets a run whose workflow never started be cancelled: it ends cancelled, not "already ended"', async () => {
    const db = stack.app.database.db;
    const t = await newTenant(db);
    const run = await storedRun(db, t.tenantId, 'Outline it.', 'orphan-cancel');
    const cancel = await stack.api.post(`/v1/agent-runs/${run.id}/cancel`, undefined, { key: t.key });
    expect(cancel.status).toBe(202);
    expect(cancel.json).toMatchObject({ status: 'failed', failure: { code: 'cancelled' } });
    // Nothing for the reconciler to start afterwards.
    await pastGrace(t.tenantId);
    expect((await reconcile()).started).not.toContain(run.id);
  });

  it("is a Schedule on the worker's task queue, created once and updated in place", async () => {
    const logger = pino({ level: 'silent' });
    await ensureReconcileSchedule(temporal, stack.taskQueue, 60, logger);
    await ensureReconcileSchedule(temporal, stack.taskQueue, 45, logger);
    const handle = temporal.schedule.getHandle(reconcileScheduleId(stack.taskQueue));
    try {
      const described = await handle.describe();
      expect(described.action).toMatchObject({ type: 'startWorkflow', workflowType: 'reconcileRunsWorkflow', taskQueue: stack.taskQueue });
      expect(described.spec.intervals?.map((i) => i.every)).toEqual([45_000]);
      expect(described.policies.overlap).toBe('SKIP');
    } finally {
      await handle.delete();
    }
  });
});
