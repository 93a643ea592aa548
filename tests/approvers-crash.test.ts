// The fault drill with an approval policy in place (issue 64): the worker is killed (SIGKILL) right
// after the first of two required approvals was audited, before it reported back. Neither approval is
// lost: the first, retried with its Idempotency-Key, counts once; the second completes the run with
// one delivery, and the audit holds exactly the two decisions.
import { Connection } from '@temporalio/client';
import { and, eq, like } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { auditEvents } from '../db/schema.ts';
import type { RunningWorker } from '../runtime/worker.ts';
import { createKey } from '../services/keys.ts';
import { setWebhookUrl } from '../services/tenants.ts';
import { webhookReceiver } from './support/fake-servers.ts';
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

describe('a kill -9 between two required approvals', () => {
  it('loses neither: the first counts once after its retry, the second completes the run with one delivery', { timeout: 150_000 }, async () => {
    const db = stack.app.database.db;
    const hook = await webhookReceiver();
    let replacement: RunningWorker | undefined;
    const crashing = spawnCrashingWorker(stack.taskQueue, { CRASH_AFTER_ACTIVITY: 'recordApprovalAudit' });
    const died = new Promise((r) => crashing.once('exit', r));
    try {
      const t = await newTenant(db);
      const second = await createKey(db, { tenantId: t.tenantId, kind: 'approver', name: 'Approver Two' });
      await setWebhookUrl(db, t.name, hook.url, { allowLoopback: true });
      const policy = await stack.api.request('PUT', '/v1/approval-policies/tool:webhook_delivery', { body: { required: 2 }, key: t.approverKey });
      expect(policy.status).toBe(200);
      const created = await stack.api.post('/v1/agent-runs', { input: 'Tell the team channel that the release notes are out.' }, { key: t.key });
      const runId = created.json.run_id as string;
      await waitForRun(stack.api, t.key, runId, (r) => r.status === 'awaiting_approval', 60_000);

      const approve = (key: string, idempotencyKey: string) =>
        stack.api.post(`/v1/agent-runs/${runId}/approval`, { decision: 'approve' }, { key, headers: { 'idempotency-key': idempotencyKey } });
      /** As the contract says to: an unconfirmed decision (503) is retried with its Idempotency-Key after Retry-After. */
      const confirmed = async (sent: ReturnType<typeof approve>, key: string, idempotencyKey: string) => {
        let answer = await sent;
        for (let i = 0; answer.status === 503 && i < 20; i++) {
          await new Promise((r) => setTimeout(r, Number(answer.headers.get('retry-after') ?? 1) * 1000));
          answer = await approve(key, idempotencyKey);
        }
        return answer;
      };
      const first = approve(t.approverKey, 'first');
      await died; // killed right after the first approval's audit activity did its work
      replacement = await startTestWorker(db, stack.taskQueue);
      const answer = await confirmed(first, t.approverKey, 'first');
      expect(answer.status, JSON.stringify(answer.json)).toBe(200);
      const waiting = await waitForRun(stack.api, t.key, runId, (r) => r.approval?.approvals?.length >= 1);
      expect(waiting.status).toBe('awaiting_approval');
      expect(waiting.approval.approvals_needed).toBe(1);

      expect((await confirmed(approve(second.secret, 'second'), second.secret, 'second')).status).toBe(200);
      const run = await waitForRun(stack.api, t.key, runId, isTerminal);
      expect(run.status).toBe('completed');
      expect(run.receipt.action_boundary.approved_by.map((a: { name: string }) => a.name)).toEqual(['Approver One', 'Approver Two']);
      const audits = await db
        .select()
        .from(auditEvents)
        .where(and(eq(auditEvents.target, `run:${runId}`), like(auditEvents.action, 'run.approval.%')));
      expect(audits.map((a) => a.keyId).sort()).toEqual([t.approverKeyId, second.id].sort());
      await until(() => hook.received.length >= 1, 'the delivery');
      expect(hook.received).toHaveLength(1);
    } finally {
      if (crashing.exitCode === null && crashing.signalCode === null) crashing.kill('SIGKILL');
      await replacement?.stop();
      await hook.close();
    }
  });
});
