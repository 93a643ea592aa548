// Who may approve (issue 64), end to end over the real API, worker, Temporal dev server and Postgres:
// a key that submits never decides; an approver key decides as itself and the receipt names it; a
// policy of two distinct approvers waits for both, counts each once, restarts after an edit, ignores a
// revoked approver's approval, and counts a Temporal signal as one approver at most.
import { Client, Connection } from '@temporalio/client';
import { and, eq, like } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { auditEvents } from '../db/schema.ts';
import { createKey, KeyRefused, revokeKey } from '../services/keys.ts';
import { setWebhookUrl } from '../services/tenants.ts';
import { approvalSignal } from '../workflows/messages.ts';
import { webhookReceiver } from './support/fake-servers.ts';
import { testDataConverter } from './support/payload-codec.ts';
import { isTerminal, newTenant, type RunStack, startRunStack, type TestTenant, waitForRun } from './support/run-stack.ts';
import { until } from './support/until.ts';

let stack: RunStack;
let db: RunStack['app']['database']['db'];
let hook: Awaited<ReturnType<typeof webhookReceiver>>;
let connection: Connection;

beforeAll(async () => {
  // Keep-alives every half second: a revoked key's open stream ends at the next one.
  stack = await startRunStack({ CHAT_KEEPALIVE_MS: '500' });
  db = stack.app.database.db;
  hook = await webhookReceiver();
  connection = await Connection.connect({ address: inject('temporalAddress') });
});
afterAll(async () => {
  await hook?.close();
  await stack?.close();
  await connection?.close();
});

/** A tenant whose deliveries reach `hook`, with a second approver key ("Approver Two"). */
async function tenantWithTwoApprovers(): Promise<TestTenant & { second: string; secondId: string }> {
  const t = await newTenant(db);
  await setWebhookUrl(db, t.name, hook.url, { allowLoopback: true });
  const second = await createKey(db, { tenantId: t.tenantId, kind: 'approver', name: 'Approver Two' });
  return { ...t, second: second.secret, secondId: second.id };
}

/** A run waiting for approval of one delivery. */
async function waitingRun(t: TestTenant, message = 'the release notes are out'): Promise<string> {
  const created = await stack.api.post('/v1/agent-runs', { input: `Tell the team channel that ${message}.` }, { key: t.key });
  expect(created.status).toBe(201);
  await waitForRun(stack.api, t.key, created.json.run_id, (r) => r.status === 'awaiting_approval');
  return created.json.run_id as string;
}

const decide = (runId: string, key: string, body: object = { decision: 'approve' }) => stack.api.post(`/v1/agent-runs/${runId}/approval`, body, { key });
const deliveriesOf = (runId: string) => hook.received.filter((r) => (r.body as { run_id?: string }).run_id === runId || r.raw.includes(runId));
const requireTwo = (t: TestTenant, body: object = { required: 2 }) =>
  stack.api.request('PUT', '/v1/approval-policies/tool:webhook_delivery', { body, key: t.approverKey });

describe('a key that submits never decides', () => {
  it("refuses a core key's decision with 401 naming the approver key, records nothing, and the run keeps waiting", async () => {
    const t = await tenantWithTwoApprovers();
    const runId = await waitingRun(t);
    const refused = await decide(runId, t.key);
    expect(refused.status).toBe(401);
    expect(refused.json.error).toMatchObject({ code: 'invalid_api_key', type: 'authentication_error' });
    expect(refused.json.error.message).toContain('approver key (gws_apv_');
    const audits = await db
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.target, `run:${runId}`), like(auditEvents.action, 'run.approval.%')));
    expect(audits).toHaveLength(0);
    expect((await stack.api.get(`/v1/agent-runs/${runId}`, { key: t.key })).json.status).toBe('awaiting_approval');

    // An approver key decides as itself: one delivery, and the receipt and audit name who approved.
    const approved = await decide(runId, t.approverKey);
    expect(approved.status).toBe(200);
    const run = await waitForRun(stack.api, t.key, runId, isTerminal);
    expect(run.approval.approvals).toEqual([expect.objectContaining({ by: { key_id: t.approverKeyId, name: 'Approver One' }, decision: 'approve' })]);
    expect(run.receipt.action_boundary.approved_by).toEqual([
      { effect: expect.stringMatching(/^webhook_delivery:/), key_id: t.approverKeyId, name: 'Approver One' },
    ]);
    const [audit] = await db
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.target, `run:${runId}`), like(auditEvents.action, 'run.approval.%')));
    expect(audit?.keyId).toBe(t.approverKeyId);
    await until(() => deliveriesOf(runId).length >= 1, 'the delivery');
    expect(deliveriesOf(runId)).toHaveLength(1);
  });

  it('an approver key reads runs and decides, and nothing else: creating a run is a 401', async () => {
    const t = await newTenant(db);
    expect((await stack.api.get('/v1/agent-runs', { key: t.approverKey })).status).toBe(200);
    expect((await stack.api.get('/v1/approvers/me', { key: t.approverKey })).json).toEqual({
      object: 'approver',
      key_id: t.approverKeyId,
      name: 'Approver One',
    });
    expect((await stack.api.post('/v1/agent-runs', { input: 'Count: a, b' }, { key: t.approverKey })).status).toBe(401);
    expect((await stack.api.get('/v1/usage', { key: t.approverKey })).status).toBe(401);
    expect((await stack.api.get('/v1/approvers/me', { key: t.key })).status).toBe(401);
    expect((await stack.api.get('/v1/approval-policies', { key: t.key })).status).toBe(401);
  });
});

describe('two distinct approvers', () => {
  it('one approval leaves the run waiting at 1 of 2; the same key again is a 409; a second approver completes it with one delivery', async () => {
    const t = await tenantWithTwoApprovers();
    expect((await requireTwo(t)).status).toBe(200);
    const runId = await waitingRun(t);

    expect((await stack.api.get(`/v1/agent-runs/${runId}`, { key: t.key })).json.approval.approvals_needed).toBe(2);
    const first = await decide(runId, t.approverKey, { decision: 'approve', reason: 'looks right' });
    expect(first.status).toBe(200);
    expect(first.json.status).toBe('awaiting_approval');
    expect(first.json.approval).toMatchObject({ state: 'pending', approvals_needed: 1 });
    expect(first.json.approval.effects[0]).toMatchObject({ required: 2, approved_by: [{ key_id: t.approverKeyId, name: 'Approver One' }] });

    const again = await decide(runId, t.approverKey);
    expect(again.status).toBe(409);
    expect(again.json.error.code).toBe('already_approved');
    expect((await stack.api.get(`/v1/agent-runs/${runId}`, { key: t.key })).json.approval.approvals).toHaveLength(1);
    expect(deliveriesOf(runId)).toHaveLength(0);

    const second = await decide(runId, t.second);
    expect(second.status).toBe(200);
    const run = await waitForRun(stack.api, t.key, runId, isTerminal);
    expect(run.status).toBe('completed');
    expect(run.receipt.action_boundary.approved_by.map((a: { name: string }) => a.name)).toEqual(['Approver One', 'Approver Two']);
    await until(() => deliveriesOf(runId).length >= 1, 'the delivery');
    expect(deliveriesOf(runId)).toHaveLength(1);
  });

  it('a waiting run keeps the policy it started with; a rejection by either approver rejects', async () => {
    const t = await tenantWithTwoApprovers();
    expect((await requireTwo(t)).status).toBe(200);
    const runId = await waitingRun(t);
    // Lowered after the run started: the run still needs two.
    expect((await requireTwo(t, { required: 1 })).status).toBe(200);
    const first = await decide(runId, t.approverKey);
    expect(first.json.approval.approvals_needed).toBe(1);
    const rejected = await decide(runId, t.second, { decision: 'reject', reason: 'not today' });
    expect(rejected.status).toBe(200);
    const run = await waitForRun(stack.api, t.key, runId, isTerminal);
    expect(run.status).toBe('failed');
    expect(run.failure.code).toBe('approval_rejected');
    expect(deliveriesOf(runId)).toHaveLength(0);
  });

  it('an edit voids the approvals given before it: the editor counts, and another approver is still needed', async () => {
    const t = await tenantWithTwoApprovers();
    expect((await requireTwo(t)).status).toBe(200);
    const runId = await waitingRun(t);
    await decide(runId, t.approverKey);
    const waiting = (await stack.api.get(`/v1/agent-runs/${runId}`, { key: t.key })).json;
    const effect = waiting.approval.effects[0];
    const edits = [{ step_id: effect.step_id, arguments: { ...effect.arguments, message: 'Release notes: v2 is out.' } }];
    const edited = await decide(runId, t.second, { decision: 'approve', edits });
    expect(edited.status).toBe(200);
    expect(edited.json.status).toBe('awaiting_approval');
    expect(edited.json.approval.effects[0].approved_by).toEqual([{ key_id: t.secondId, name: 'Approver Two' }]);
    expect(edited.json.approval.approvals.at(-1)).toMatchObject({ by: { name: 'Approver Two' }, edited: [effect.step_id] });
    // Not bound to what was edited: an approval naming no digests counts on nothing.
    const unbound = await decide(runId, t.approverKey);
    expect(unbound.status).toBe(409);
    expect(unbound.json.error.code).toBe('approval_stale');
    // The first approver approves again, now of what the edit made, and the run goes on.
    const again = await decide(runId, t.approverKey, { decision: 'approve', digests: [edited.json.approval.effects[0].args_digest] });
    expect(again.status).toBe(200);
    await waitForRun(stack.api, t.key, runId, isTerminal);
    await until(() => deliveriesOf(runId).length >= 1, 'the delivery');
    expect(deliveriesOf(runId)).toHaveLength(1);
    expect(JSON.stringify(deliveriesOf(runId)[0]!.body)).toContain('v2 is out');
  });

  it("a revoked approver's approval of a waiting run no longer counts, and its key decides nothing", async () => {
    const t = await tenantWithTwoApprovers();
    expect((await requireTwo(t)).status).toBe(200);
    const runId = await waitingRun(t);
    await decide(runId, t.approverKey);
    expect(await revokeKey(db, t.approverKeyId)).toBe(true);
    expect((await decide(runId, t.approverKey, { decision: 'reject' })).status).toBe(401);
    const second = await decide(runId, t.second);
    expect(second.status).toBe(200);
    expect(second.json.status).toBe('awaiting_approval');
    expect(second.json.approval.approvals_needed).toBe(1);
    expect(second.json.approval.effects[0].approved_by).toEqual([{ key_id: t.secondId, name: 'Approver Two' }]);
    // The audit shows both decisions; the run needs a new approver.
    const third = await createKey(db, { tenantId: t.tenantId, kind: 'approver', name: 'Approver Three' });
    expect((await decide(runId, third.secret)).status).toBe(200);
    expect((await waitForRun(stack.api, t.key, runId, isTerminal)).status).toBe('completed');
  });

  it('a Temporal signal counts once, as the approver `temporal`, and never meets a policy of two alone', async () => {
    const t = await tenantWithTwoApprovers();
    expect((await requireTwo(t)).status).toBe(200);
    const runId = await waitingRun(t);
    const handle = new Client({ connection, dataConverter: testDataConverter() }).workflow.getHandle(runId);
    await handle.signal(approvalSignal, { decision: 'approve' });
    await handle.signal(approvalSignal, { decision: 'approve' });
    await until(async () => (await stack.api.get(`/v1/agent-runs/${runId}`, { key: t.key })).json.approval.approvals?.length >= 1, 'the signal counted');
    const run = (await stack.api.get(`/v1/agent-runs/${runId}`, { key: t.key })).json;
    expect(run.status).toBe('awaiting_approval');
    expect(run.approval.approvals.map((v: { by: { name: string } }) => v.by.name)).toEqual(['temporal']);
    expect(run.approval.approvals_needed).toBe(1);
    expect((await decide(runId, t.approverKey)).status).toBe(200);
    expect((await waitForRun(stack.api, t.key, runId, isTerminal)).status).toBe('completed');
  });
});

describe('revoking an approver key', () => {
  it('ends its open event stream at the next keep-alive', async () => {
    const t = await newTenant(db);
    const controller = new AbortController();
    const response = await fetch(`${stack.app.url}/v1/agent-runs/events`, {
      headers: { authorization: `Bearer ${t.approverKey}`, accept: 'text/event-stream' },
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    const readUntilEnd = (async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return text;
        text += decoder.decode(value);
      }
    })();
    await until(() => text.includes('event: ready'), 'the stream to listen');
    expect(await revokeKey(db, t.approverKeyId)).toBe(true);
    const ended = await Promise.race([readUntilEnd, new Promise<null>((r) => setTimeout(() => r(null), 10_000))]);
    controller.abort();
    expect(ended).toContain(': the key was revoked');
  });
});

describe('policies and approver keys refuse bad input, and nothing changes', () => {
  it('answers 400 for an unmeetable policy, an unknown or read tool, and another tenant’s approver key', async () => {
    const t = await tenantWithTwoApprovers();
    const other = await newTenant(db);
    const put = (scope: string, body: object) => stack.api.request('PUT', `/v1/approval-policies/${scope}`, { body, key: t.approverKey });
    const cases = [
      put('tool:webhook_delivery', { required: 3, allowed_approvers: [t.approverKeyId, t.secondId] }),
      put('tool:nowhere__send', { required: 2 }),
      put('tool:count_list_items', { required: 2 }),
      put('tool:webhook_delivery', { required: 6 }),
      put('tool:webhook_delivery', { required: 1, allowed_approvers: [other.approverKeyId] }),
      put('effect_class:read', { required: 2 }),
    ];
    const answers = await Promise.all(cases);
    expect(answers.map((a) => a.status)).toEqual([400, 400, 400, 400, 400, 400]);
    expect(answers[4]!.json.error.code).toBe('unknown_approver');
    expect((await stack.api.get('/v1/approval-policies', { key: t.approverKey })).json.data).toEqual([]);
  });

  it('an approver key needs a name, unique in its tenant and at most 100 characters', async () => {
    const t = await newTenant(db);
    await expect(createKey(db, { tenantId: t.tenantId, kind: 'approver' })).rejects.toBeInstanceOf(KeyRefused);
    await expect(createKey(db, { tenantId: t.tenantId, kind: 'approver', name: 'x'.repeat(101) })).rejects.toMatchObject({ code: 'name_too_long' });
    await expect(createKey(db, { tenantId: t.tenantId, kind: 'approver', name: ' Approver  One ' })).rejects.toMatchObject({ code: 'name_taken' });
    await expect(createKey(db, { tenantId: t.tenantId, kind: 'core', name: 'Dana' })).rejects.toMatchObject({ code: 'name_only_for_approvers' });
  });

  it("finds nothing across tenants: another tenant's approver key neither reads nor decides a run", async () => {
    const t = await tenantWithTwoApprovers();
    const other = await newTenant(db);
    const runId = await waitingRun(t);
    expect((await stack.api.get(`/v1/agent-runs/${runId}`, { key: other.approverKey })).status).toBe(404);
    expect((await decide(runId, other.approverKey)).status).toBe(404);
    expect((await stack.api.get('/v1/agent-runs?status=awaiting_approval', { key: other.approverKey })).json.data).toEqual([]);
    expect((await stack.api.get(`/v1/agent-runs/${runId}`, { key: t.key })).json.status).toBe('awaiting_approval');
    expect((await decide(runId, t.approverKey)).status).toBe(200);
  });
});
