// Approval decisions end to end (real API, worker, Temporal dev server and
// Postgres): one audit event per decision however often it is retried, 422 for
// a reused Idempotency-Key, and bounded answers while Temporal or its workers
// are down.
import { Context } from '@temporalio/activity';
import { and, eq, like } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { auditEvents, runs } from '../db/schema.ts';
import type { RunningWorker } from '../runtime/worker.ts';
import { ApiClient } from './support/client.ts';
import { startGrpcFaultProxy } from './support/grpc-fault-proxy.ts';
import { storedRun, isTerminal, newTenant, type RunStack, startRunStack, startTestWorker, type TestTenant, waitForRun } from './support/run-stack.ts';
import { startTestApp } from './support/test-app.ts';

/** The activity type an activity interceptor sees. */
const activityTypeOf = (_input: unknown) => Context.current().info.activityType;

/** Upper bound on any answer while Temporal (or its workers) is down: the API's deadline is 5 s. */
const OUTAGE_ANSWER_MS = 8_000;

let stack: RunStack;
let db: RunStack['app']['database']['db'];

beforeAll(async () => {
  stack = await startRunStack();
  db = stack.app.database.db;
});
afterAll(async () => {
  await stack.close();
});

/** A run that stops at awaiting_approval (its plan has an external effect). */
async function awaitingRun(s: RunStack, t: TestTenant): Promise<string> {
  const created = await s.api.post(
    '/v1/agent-runs',
    { input: 'Summarise the incident timeline and tell the on-call channel that the incident is closed.' },
    { key: t.key },
  );
  expect(created.status).toBe(201);
  await waitForRun(s.api, t.key, created.json.run_id, (r) => r.status === 'awaiting_approval');
  return created.json.run_id;
}

const decide = (s: RunStack, t: TestTenant, runId: string, body: object, key?: string) =>
  s.api.post(`/v1/agent-runs/${runId}/approval`, body, { key: t.approverKey, headers: key ? { 'idempotency-key': key } : {} });

/** The run's approval audit events, straight from the audit table. */
const approvalEvents = (runId: string) =>
  db
    .select()
    .from(auditEvents)
    .where(and(eq(auditEvents.target, `run:${runId}`), like(auditEvents.action, 'run.approval.%')));

async function timed<T>(fn: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const started = Date.now();
  const result = await fn();
  return { result, ms: Date.now() - started };
}

describe('approval idempotency', () => {
  it('three retries of one Idempotency-Key, sent together, apply and record the decision once', async () => {
    const t = await newTenant(db);
    const runId = await awaitingRun(stack, t);
    const body = { decision: 'approve', reason: 'checked' };
    const replies = await Promise.all([1, 2, 3].map(() => decide(stack, t, runId, body, 'approve-1')));
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200]);
    const later = await decide(stack, t, runId, body, 'approve-1');
    expect(later.status).toBe(200);

    const events = await approvalEvents(runId);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ tenantId: t.tenantId, action: 'run.approval.approve' });
    const run = await waitForRun(stack.api, t.key, runId, isTerminal);
    expect(run.approval).toMatchObject({ state: 'approved', decision_reason: 'checked' });
    // The tenant's audit listing shows the one event too.
    const listed = await stack.api.get('/v1/audit-events?limit=100', { key: t.key });
    expect(listed.json.data.filter((e: { target: string }) => e.target === `run:${runId}`)).toHaveLength(1);
  });

  it('the same key with another decision or reason answers 422 and records nothing, before and after the run ends', async () => {
    const t = await newTenant(db);
    const runId = await awaitingRun(stack, t);
    expect((await decide(stack, t, runId, { decision: 'approve' }, 'k-1')).status).toBe(200);

    const other = await decide(stack, t, runId, { decision: 'reject' }, 'k-1');
    expect(other.status).toBe(422);
    expect(other.json.error).toMatchObject({ code: 'idempotency_key_reused', param: 'Idempotency-Key' });
    const otherReason = await decide(stack, t, runId, { decision: 'approve', reason: 'changed my mind' }, 'k-1');
    expect(otherReason.status).toBe(422);

    await waitForRun(stack.api, t.key, runId, isTerminal);
    const afterEnd = await decide(stack, t, runId, { decision: 'reject' }, 'k-1');
    expect(afterEnd.status).toBe(422);
    expect(afterEnd.json.error.code).toBe('idempotency_key_reused');

    const events = await approvalEvents(runId);
    expect(events.map((e) => e.action)).toEqual(['run.approval.approve']);
  });

  it('a repeat after the run completed answers 200 as the first did; another key gets 409', async () => {
    const t = await newTenant(db);
    const runId = await awaitingRun(stack, t);
    const first = await decide(stack, t, runId, { decision: 'reject', reason: 'not now' }, 'reject-1');
    expect(first.status).toBe(200);
    const ended = await waitForRun(stack.api, t.key, runId, isTerminal);
    expect(ended.status).toBe('failed');

    const repeat = await decide(stack, t, runId, { decision: 'reject', reason: 'not now' }, 'reject-1');
    expect(repeat.status).toBe(200);
    expect(repeat.json).toMatchObject({ run_id: runId, status: 'failed', approval: { state: 'rejected', decision_reason: 'not now' } });

    const fresh = await decide(stack, t, runId, { decision: 'reject', reason: 'not now' }, 'reject-2');
    expect(fresh.status).toBe(409);
    expect(fresh.json.error.code).toBe('run_not_awaiting_approval');
    expect(await approvalEvents(runId)).toHaveLength(1);
  });

  it('when the first answer never recorded its event, a retry after the run ended records it once (Temporal keeps the Update outcome)', async () => {
    const t = await newTenant(db);
    const runId = await awaitingRun(stack, t);
    expect((await decide(stack, t, runId, { decision: 'approve' }, 'lost-1')).status).toBe(200);
    // As if the audit write of that request had failed after Temporal applied the decision.
    await db.delete(auditEvents).where(eq(auditEvents.target, `run:${runId}`));
    await waitForRun(stack.api, t.key, runId, isTerminal);

    const other = await decide(stack, t, runId, { decision: 'reject' }, 'lost-1');
    expect(other.status).toBe(422);
    expect(await approvalEvents(runId)).toHaveLength(0);

    const retries = await Promise.all([1, 2].map(() => decide(stack, t, runId, { decision: 'approve' }, 'lost-1')));
    expect(retries.map((r) => r.status)).toEqual([200, 200]);
    expect((await approvalEvents(runId)).map((e) => e.action)).toEqual(['run.approval.approve']);
  });
});

describe('bounded answers while Temporal is down', () => {
  it('create, approve and cancel each answer 503 within the deadline when Temporal is unreachable', async () => {
    const down = await startTestApp({ TEMPORAL_ADDRESS: '127.0.0.1:1', TASK_QUEUE: stack.taskQueue });
    try {
      const client = await ApiClient.connect(down.url);
      const t = await newTenant(db);
      const row = async () => (await storedRun(db, t.tenantId, 'Summarise the notes. The launch moved to May.')).id;
      const [forApproval, forCancel] = [await row(), await row()];

      const calls = {
        create: () => client.post('/v1/agent-runs', { input: 'Summarise the quarterly metrics.' }, { key: t.key, headers: { 'idempotency-key': 'down-1' } }),
        approve: () =>
          client.post(`/v1/agent-runs/${forApproval}/approval`, { decision: 'approve' }, { key: t.approverKey, headers: { 'idempotency-key': 'down-2' } }),
        cancel: () => client.post(`/v1/agent-runs/${forCancel}/cancel`, undefined, { key: t.key }),
      };
      for (const [name, call] of Object.entries(calls)) {
        const { result, ms } = await timed(call);
        expect({ name, status: result.status, code: result.json?.error?.code }).toEqual({ name, status: 503, code: 'service_unavailable' });
        expect(result.headers.get('retry-after')).toBe('5');
        expect(ms, `${name} answered after ${ms} ms`).toBeLessThan(OUTAGE_ANSWER_MS);
      }
      expect(await approvalEvents(forApproval)).toHaveLength(0);
    } finally {
      await down.close();
    }
  });

  it('an approval while no worker runs answers 503 within the deadline; the same key later answers 200 and records one event', async () => {
    const own = await startRunStack();
    let revived: RunningWorker | undefined;
    try {
      const t = await newTenant(own.app.database.db);
      const runId = await awaitingRun(own, t);
      await own.worker.stop();

      const { result: unconfirmed, ms } = await timed(() => decide(own, t, runId, { decision: 'approve' }, 'no-worker-1'));
      expect(unconfirmed.status).toBe(503);
      expect(unconfirmed.json.error.code).toBe('service_unavailable');
      expect(unconfirmed.json.error.message).toContain('same Idempotency-Key');
      expect(ms, `approval answered after ${ms} ms`).toBeLessThan(OUTAGE_ANSWER_MS);
      expect(await approvalEvents(runId)).toHaveLength(0);

      revived = await startTestWorker(own.app.database.db, own.taskQueue);
      // Whether Temporal kept the first Update (and applied it when the worker came back) or the retry
      // delivers it, the answer is the same and the decision is applied and recorded once.
      let retried = await decide(own, t, runId, { decision: 'approve' }, 'no-worker-1');
      for (let i = 0; retried.status === 503 && i < 5; i++) retried = await decide(own, t, runId, { decision: 'approve' }, 'no-worker-1');
      expect(retried.status).toBe(200);
      const run = await waitForRun(own.api, t.key, runId, isTerminal);
      expect(run.approval.state).toBe('approved');
      expect((await approvalEvents(runId)).map((e) => e.action)).toEqual(['run.approval.approve']);
    } finally {
      await revived?.stop();
      await own.close();
    }
  });

  it('while the record says awaiting_approval and the workflow is behind it, an approval is never a 409: 503 with Retry-After, then applied once', async () => {
    // A worker that recorded the move to awaiting_approval and died before its workflow task completed leaves
    // the record ahead of the workflow, whose replacement replays from before approval. Here the workflow is
    // held in planning (its plan activity waits at a gate) while the record is moved on, as that worker did.
    const own = await startRunStack();
    await own.worker.stop();
    let opened!: () => void;
    let reached!: () => void;
    const gate = new Promise<void>((r) => (opened = r));
    const atGate = new Promise<void>((r) => (reached = r));
    const gated = await startTestWorker(
      own.app.database.db,
      own.taskQueue,
      {},
      {
        interceptors: {
          activity: [
            () => ({
              inbound: {
                async execute(input, next) {
                  if (activityTypeOf(input) === 'planRun') {
                    reached();
                    await gate;
                  }
                  return next(input);
                },
              },
            }),
          ],
        },
      },
    );
    try {
      const t = await newTenant(own.app.database.db);
      const created = await own.api.post(
        '/v1/agent-runs',
        { input: 'Summarise the incident timeline and tell the on-call channel that the incident is closed.' },
        { key: t.key },
      );
      const runId = created.json.run_id as string;
      await atGate;
      await own.app.database.db.update(runs).set({ status: 'awaiting_approval' }).where(eq(runs.id, runId));
      expect((await own.api.get(`/v1/agent-runs/${runId}`, { key: t.key })).json.status).toBe('awaiting_approval');

      const early = await decide(own, t, runId, { decision: 'approve' }, 'behind-1');
      expect(early.status).toBe(503);
      expect(early.json.error.code).toBe('service_unavailable');
      expect(early.headers.get('retry-after')).toBe('1');
      expect(await approvalEvents(runId)).toHaveLength(0);

      opened();
      await waitForRun(own.api, t.key, runId, (r) => r.status === 'awaiting_approval' && r.plan !== null);
      const applied = await decide(own, t, runId, { decision: 'approve' }, 'behind-1');
      expect(applied.status).toBe(200);
      const run = await waitForRun(own.api, t.key, runId, isTerminal);
      expect(run.approval.state).toBe('approved');
      expect((await approvalEvents(runId)).map((e) => e.action)).toEqual(['run.approval.approve']);
    } finally {
      opened();
      await gated.stop();
      await own.close();
    }
  });

  it('while Temporal answers that the workflow is not ready (its last task failed), an approval is retried, then a 503 with Retry-After; then applied once', async () => {
    // Temporal answers an Update FAILED_PRECONDITION while the workflow's last task failed or timed out and is
    // being retried (a worker overloaded past the task's timeout). The API's client reaches Temporal through a
    // proxy that gives that answer on demand; the worker reaches Temporal directly.
    const proxy = await startGrpcFaultProxy(inject('temporalAddress'));
    const proxied = await startTestApp({ TASK_QUEUE: stack.taskQueue, TEMPORAL_ADDRESS: proxy.address });
    const viaProxy = await ApiClient.connect(proxied.url);
    try {
      const t = await newTenant(db);
      const notReady = (times: number) => proxy.failNext('UpdateWorkflowExecution', times, 9, 'Workflow is not ready to handle update');

      // Not ready twice, then ready: one answer, 200, the decision applied once.
      const first = await awaitingRun(stack, t);
      notReady(2);
      const retried = await viaProxy.post(
        `/v1/agent-runs/${first}/approval`,
        { decision: 'approve' },
        { key: t.approverKey, headers: { 'idempotency-key': 'nr-1' } },
      );
      expect(retried.status).toBe(200);
      expect(proxy.calls('UpdateWorkflowExecution')).toBe(3);
      expect((await waitForRun(stack.api, t.key, first, isTerminal)).approval.state).toBe('approved');
      expect(await approvalEvents(first)).toHaveLength(1);

      // Not ready for longer than the API waits: a 503 with Retry-After, nothing recorded; the same key later applies.
      const second = await awaitingRun(stack, t);
      notReady(1_000);
      const { result: refused, ms } = await timed(() =>
        viaProxy.post(`/v1/agent-runs/${second}/approval`, { decision: 'approve' }, { key: t.approverKey, headers: { 'idempotency-key': 'nr-2' } }),
      );
      expect(refused.status).toBe(503);
      expect(refused.json.error.code).toBe('service_unavailable');
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(ms).toBeLessThan(OUTAGE_ANSWER_MS);
      expect(await approvalEvents(second)).toHaveLength(0);
      expect((await stack.api.get(`/v1/agent-runs/${second}`, { key: t.key })).json.status).toBe('awaiting_approval');

      notReady(0);
      const applied = await viaProxy.post(
        `/v1/agent-runs/${second}/approval`,
        { decision: 'approve' },
        { key: t.approverKey, headers: { 'idempotency-key': 'nr-2' } },
      );
      expect(applied.status).toBe(200);
      expect((await waitForRun(stack.api, t.key, second, isTerminal)).approval.state).toBe('approved');
      expect((await approvalEvents(second)).map((e) => e.action)).toEqual(['run.approval.approve']);
    } finally {
      await proxied.close();
      await proxy.close();
    }
  });

  it('an approval while the run is planning, and its record says so, is a 409 at once', async () => {
    const t = await newTenant(db);
    const created = await stack.api.post(
      '/v1/agent-runs',
      { input: 'Summarise the incident timeline and tell the on-call channel that the incident is closed.' },
      { key: t.key },
    );
    const runId = created.json.run_id as string;
    await db.update(runs).set({ status: 'planning' }).where(eq(runs.id, runId));
    // Whatever the workflow's state by now, a run whose record does not await approval is refused, never retried.
    const answer = await decide(stack, t, runId, { decision: 'approve' });
    expect([answer.status, answer.json.error?.code]).toEqual([409, 'run_not_awaiting_approval']);
  });
});
