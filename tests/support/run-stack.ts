// A test API plus an in-process worker on a task queue of their own, and
// helpers to make tenants and wait for runs.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { expect, inject } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { loadConfig } from '../../config/env.ts';
import { localTemporal } from '../../config/temporal-connection-settings.ts';
import { ledgerEntries, ledgerHolds } from '../../db/schema.ts';
import type { Db } from '../../db/client.ts';
import { newId } from '../../domain/ids.ts';
import { activityDeps } from '../../runtime/compose-activities.ts';
import { type RunningWorker, startWorker } from '../../runtime/worker.ts';
import { createKey } from '../../services/keys.ts';
import { createRun, type RunRow } from '../../services/runs.ts';
import { grantCredits } from '../../services/ledger.ts';
import { ApiClient } from './client.ts';
import { codecOf, payloadEnv } from './payload-codec.ts';
import { serviceEnv } from './service-env.ts';
import { startTestApp, type TestApp } from './test-app.ts';

export interface RunStack {
  app: TestApp;
  api: ApiClient;
  worker: RunningWorker;
  taskQueue: string;
  close(): Promise<void>;
}

/**
 * An in-process worker on `taskQueue` with the test run's database, key and workflow bundle; extra
 * options (interceptors, say) as startWorker takes them. Stop it yourself.
 */
export function startTestWorker(
  db: Db,
  taskQueue: string,
  env: Record<string, string> = {},
  extra: Partial<Parameters<typeof startWorker>[0]> = {},
): Promise<RunningWorker> {
  const config = loadConfig({ DATABASE_URL: inject('databaseUrl'), ...payloadEnv(), TASK_QUEUE: taskQueue, ...env });
  return startWorker({
    temporal: localTemporal(inject('temporalAddress')),
    taskQueue,
    activities: activityDeps(config, db),
    payloadCodec: codecOf(config),
    logger: pino({ level: 'silent' }),
    workflowBundlePath: inject('workflowBundlePath'),
    versioning: config.temporal.versioning,
    ...extra,
  });
}

/** A worker process (tests/support/crashing-worker.ts) on `taskQueue` that kills itself as `env` says (CRASH_…). */
export function spawnCrashingWorker(taskQueue: string, env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', 'tests/support/crashing-worker.ts'], {
    env: serviceEnv({ LOG_LEVEL: 'silent', TASK_QUEUE: taskQueue, ...env }),
    stdio: 'ignore',
  });
}

export async function startRunStack(env: Record<string, string> = {}): Promise<RunStack> {
  const taskQueue = `test-${randomBytes(4).toString('hex')}`;
  const app = await startTestApp({ TASK_QUEUE: taskQueue, ...env });
  const worker = await startTestWorker(app.database.db, taskQueue, env);
  return {
    app,
    api: await ApiClient.connect(app.url),
    worker,
    taskQueue,
    async close() {
      await worker.stop();
      await app.close();
    },
  };
}

export interface TestTenant {
  name: string;
  tenantId: string;
  /** A core key: submits and reads runs. */
  key: string;
  /** An approver key (person "Approver One"): reads runs and decides approvals; a core key never decides. */
  approverKey: string;
  approverKeyId: string;
}

export async function newTenant(db: Db, credits = 1_000): Promise<TestTenant> {
  const name = `t-${randomBytes(5).toString('hex')}`;
  const key = await createKey(db, { tenant: name, kind: 'core' });
  const approver = await createKey(db, { tenantId: key.tenantId, kind: 'approver', name: 'Approver One' });
  if (credits > 0) await grantCredits(db, { tenantId: key.tenantId, amount: credits, entryKey: newId('grant') });
  return { name, tenantId: key.tenantId, key: key.secret, approverKey: approver.secret, approverKeyId: approver.id };
}

/** Polls GET /v1/agent-runs/{id} until `done` holds, returning that run. */
// `any`: tests read arbitrary JSON
/**
 * A run's row as the API inserts it before it starts the workflow (and no workflow): for tests of
 * what finds such a row (the reconciler, cancel, the projection). `idempotencyKey` null unless given.
 */
export async function storedRun(db: Db, tenantId: string, input: string, idempotencyKey: string | null = null): Promise<RunRow> {
  const { run } = await createRun(db, { tenantId, idempotencyKey, requestDigest: 'sha256:test', input, memory: false, model: 'svc-workspace' });
  return run;
}

export async function waitForRun(api: ApiClient, key: string, runId: string, done: (run: any) => boolean, timeoutMs = 30_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await api.get(`/v1/agent-runs/${runId}`, { key });
    expect(r.status).toBe(200);
    if (done(r.json)) return r.json;
    if (Date.now() > deadline) throw new Error(`run ${runId} still ${r.json.status}/${r.json.current_step}`);
    await new Promise((res) => setTimeout(res, 100));
  }
}

export const isTerminal = (run: { status: string }) => ['completed', 'failed', 'needs_attention'].includes(run.status);

/** The run's holds and charges, straight from the ledger tables. */
export async function ledgerOf(db: Db, runId: string) {
  const holds = await db.select().from(ledgerHolds).where(eq(ledgerHolds.runId, runId));
  const charges = await db
    .select()
    .from(ledgerEntries)
    .where(and(eq(ledgerEntries.runId, runId), eq(ledgerEntries.kind, 'charge')));
  return { holds, charges };
}
