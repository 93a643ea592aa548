// A worker killed with -9 as its run moves to approval: the move is written to
// the run's record (a local activity that committed), but the workflow task
// never completes. The replacement worker replays the run from before approval,
// and an approval sent meanwhile reaches the workflow in the same activation as
// that replay, where its validator still sees `planning`. The record said
// awaiting_approval all along, so the API must never answer 409 there: it
// applies the decision once (or answers a retryable 503), and audits it once.
import { Client, Connection } from '@temporalio/client';
import { and, eq, like } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { auditEvents } from '../db/schema.ts';
import type { RunningWorker } from '../runtime/worker.ts';
import { setWebhookUrl } from '../services/tenants.ts';
import { webhookReceiver } from './support/fake-servers.ts';
import { testDataConverter } from './support/payload-codec.ts';
import { isTerminal, newTenant, type RunStack, spawnCrashingWorker, startRunStack, startTestWorker, waitForRun } from './support/run-stack.ts';
import { until } from './support/until.ts';

let stack: RunStack;
let connection: Connection;
beforeAll(async () => {
  stack = await startRunStack();
  await stack.worker.stop(); // the run's first worker is the crashing one below
  connection = await Connection.connect({ address: inject('temporalAddress') });
});
afterAll(async () => {
  await stack?.close();
  await connection?.close();
});

describe('an approval right after the worker died at the approval transition', () => {
  it('is applied once, never refused with 409, while the record says awaiting_approval', { timeout: 150_000 }, async () => {
    const db = stack.app.database.db;
    const hook = await webhookReceiver();
    let replacement: RunningWorker | undefined;
    const crashing = spawnCrashingWorker(stack.taskQueue, { CRASH_AFTER_TRANSITION: 'awaiting_approval' });
    const died = new Promise((r) => crashing.once('exit', r));
    try {
      const t = await newTenant(db);
      await setWebhookUrl(db, t.name, hook.url, { allowLoopback: true });
      const created = await stack.api.post('/v1/agent-runs', { input: 'Tell the team channel that the release notes are out.' }, { key: t.key });
      const runId = created.json.run_id as string;
      await died;
      expect((await stack.api.get(`/v1/agent-runs/${runId}`, { key: t.key })).json.status).toBe('awaiting_approval');

      // Wait until the dead worker's workflow task has timed out and is scheduled again, so the next
      // worker's first activation replays the run with the approval Update in it.
      const temporal = new Client({ connection, dataConverter: testDataConverter() });
      await until(
        async () => {
          const { raw } = await temporal.workflow.getHandle(runId).describe();
          // The dead worker had started the task; once it timed out, it is scheduled again for the next worker.
          const state = String(raw.pendingWorkflowTask?.state ?? '');
          return state === 'PENDING_WORKFLOW_TASK_STATE_SCHEDULED' || state === '1';
        },
        'the workflow task to be scheduled again',
        { withinMs: 60_000 },
      );
      const approving = stack.api.post(
        `/v1/agent-runs/${runId}/approval`,
        { decision: 'approve' },
        { key: t.approverKey, headers: { 'idempotency-key': 'after-crash' } },
      );
      replacement = await startTestWorker(db, stack.taskQueue);
      let answer = await approving;
      expect(answer.status, JSON.stringify(answer.json)).not.toBe(409);
      for (let i = 0; answer.status === 503 && i < 10; i++) {
        await new Promise((r) => setTimeout(r, Number(answer.headers.get('retry-after') ?? 1) * 1000));
        answer = await stack.api.post(
          `/v1/agent-runs/${runId}/approval`,
          { decision: 'approve' },
          { key: t.approverKey, headers: { 'idempotency-key': 'after-crash' } },
        );
        expect(answer.status).not.toBe(409);
      }
      expect(answer.status).toBe(200);
      const run = await waitForRun(stack.api, t.key, runId, isTerminal);
      expect(run.approval.state).toBe('approved');
      const audits = await db
        .select()
        .from(auditEvents)
        .where(and(eq(auditEvents.target, `run:${runId}`), like(auditEvents.action, 'run.approval.%')));
      expect(audits.map((a) => a.action)).toEqual(['run.approval.approve']);
      expect(hook.received).toHaveLength(1);
    } finally {
      if (crashing.exitCode === null && crashing.signalCode === null) crashing.kill('SIGKILL');
      await replacement?.stop();
      await hook.close();
    }
  });
});
