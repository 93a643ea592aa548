import { Client, Connection } from '@temporalio/client';
import { eq } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { journeyEvents, memoryEntries, runs } from '../db/schema.ts';
import { digestOf } from '../domain/digest.ts';
import { rememberEntry } from '../services/memory.ts';
import { setRoute } from '../services/routing.ts';
import { startRunWorkflow } from '../services/run-workflow.ts';
import { setWebhookUrl } from '../services/tenants.ts';
import { ApiClient } from './support/client.ts';
import { webhookReceiver } from './support/fake-servers.ts';
import { startTestApp } from './support/test-app.ts';
import {
  storedRun,
  isTerminal,
  ledgerOf as sharedLedgerOf,
  newTenant,
  type RunStack,
  startRunStack,
  type TestTenant,
  waitForRun,
} from './support/run-stack.ts';
import { testDataConverter } from './support/payload-codec.ts';

let stack: RunStack;
let db: RunStack['app']['database']['db'];
let temporal: Client;
let connection: Connection;

beforeAll(async () => {
  stack = await startRunStack();
  db = stack.app.database.db;
  connection = await Connection.connect({ address: inject('temporalAddress') });
  temporal = new Client({ connection, dataConverter: testDataConverter() });
});
afterAll(async () => {
  await connection.close();
  await stack.close();
});

const create = (t: TestTenant, body: object, idempotencyKey?: string) =>
  stack.api.post('/v1/agent-runs', body, { key: t.key, headers: idempotencyKey ? { 'idempotency-key': idempotencyKey } : {} });

const ledgerOf = (runId: string) => sharedLedgerOf(db, runId);

describe('a run without external effects', () => {
  it('goes estimate → reserve → plan → execute → verify → settle; on the local provider it prepares, performs nothing, and says so', async () => {
    const t = await newTenant(db, 1_000);
    const input = 'Review the vendor terms for renewal risk; then list the three largest obligations.';
    const created = await create(t, { input });
    expect(created.status).toBe(201);
    expect(created.json.status_url).toBe(`${stack.app.url}/v1/agent-runs/${created.json.run_id}`);
    const run = await waitForRun(stack.api, t.key, created.json.run_id, isTerminal);

    // Key-phrase extraction ran (and is on the record), but it performs neither review nor list.
    expect(run.status).toBe('needs_attention');
    expect(run.current_step).toBeNull();
    expect(run.approval).toBeNull();
    expect(run.plan.steps.map((s: { tool: string }) => s.tool)).toEqual(['text_analysis', 'text_analysis']);
    expect(run.estimate.amounts.total).toBeGreaterThan(0);
    expect(run.receipt.verification_class).toBe('unverified');
    expect(run.receipt.unresolved).toHaveLength(2);
    for (const line of run.receipt.unresolved) expect(line).toMatch(/needs a model to \w+/);
    expect(run.receipt.digests.input).toBe(digestOf(input));
    expect(run.receipt.digests.plan).toBe(digestOf(run.plan));
    expect(run.receipt.digests.result).toBe(digestOf(run.result));
    expect(Object.keys(run.receipt.digests)).toEqual(expect.arrayContaining(['step:step_1', 'step:step_2']));
    expect(run.receipt.action_boundary).toEqual({
      effects_requested: [],
      effects_approved: [],
      effects_performed: [],
      effects_not_performed: [],
      effects_outcome_unknown: [],
    });
    // Accounted for by the local planner's report, read as any model's: one part per action, quoted.
    expect(run.receipt.actions.map((a: { kind: string; outcome: string; by: string[]; checked: boolean }) => [a.kind, a.outcome, a.by, a.checked])).toEqual([
      ['information', 'not_performed', [], false],
      ['information', 'not_performed', [], false],
    ]);
    for (const a of run.receipt.actions) expect(input).toContain(a.quote);
    expect(run.result.summary).toMatch(/^0 of 2 part\(s\) of the request performed, by the local planner's report \(no model; only the input was read\)/);

    // Settle: actual usage, bounded by the hold, the rest released; read back through /v1/usage.
    const { holds, charges } = await ledgerOf(run.run_id);
    expect(holds).toHaveLength(1);
    expect(holds[0]!.amount).toBe(run.estimate.amounts.total);
    expect(holds[0]!.status).toBe('settled');
    expect(charges).toHaveLength(1);
    expect(run.usage.charged).toBe(charges[0]!.amount);
    expect(run.usage.charged).toBeLessThanOrEqual(holds[0]!.amount);
    expect(run.usage.charged + run.usage.released).toBe(holds[0]!.amount);
    const usage = await stack.api.get('/v1/usage', { key: t.key });
    expect(usage.json).toMatchObject({ balance: 1_000 - run.usage.charged, held: 0, available: 1_000 - run.usage.charged, open_reservations: [] });
    expect(usage.json.settled_charges).toEqual([expect.objectContaining({ run_id: run.run_id, amount: run.usage.charged })]);
  });

  it('estimates the same amount through POST /v1/usage/estimate as the run did', async () => {
    const t = await newTenant(db);
    const input = 'Draft a migration checklist for the payments database, then flag risky steps.';
    const estimate = await stack.api.post('/v1/usage/estimate', { input }, { key: t.key });
    expect(estimate.status).toBe(200);
    const run = await waitForRun(stack.api, t.key, (await create(t, { input })).json.run_id, isTerminal);
    expect(estimate.json.amounts).toEqual(run.estimate.amounts);
    expect(estimate.json.basis.input_tokens).toBe(Math.ceil(Buffer.byteLength(input) / 4));
  });

  it('ends needs_attention with nothing held when the balance cannot cover the estimate', async () => {
    const t = await newTenant(db, 0);
    const run = await waitForRun(stack.api, t.key, (await create(t, { input: 'Summarise the quarterly report. Revenue rose 4%.' })).json.run_id, isTerminal);
    expect(run.status).toBe('needs_attention');
    expect(run.failure.code).toBe('insufficient_credits');
    expect(run.plan).toBeNull();
    expect(await ledgerOf(run.run_id)).toEqual({ holds: [], charges: [] });
  });
});

describe('approval of external effects', () => {
  it('waits in awaiting_approval, delivers only after approval, and completes', async () => {
    const hook = await webhookReceiver();
    try {
      const t = await newTenant(db);
      const { webhookSecret } = await setWebhookUrl(db, t.name, hook.url, { allowLoopback: true });
      // Delivery only: the one action the local provider can perform (an analysis action would leave the run needs_attention).
      const created = await create(t, { input: 'Tell the on-call channel that the incident timeline is ready.' });
      const waiting = await waitForRun(stack.api, t.key, created.json.run_id, (r) => r.status === 'awaiting_approval');
      expect(waiting.current_step).toBe('approval');
      expect(waiting.approval).toMatchObject({ state: 'pending', effects: [{ tool: 'webhook_delivery' }] });
      expect(waiting.approval.effects[0].why).toContain('deliver');
      expect(hook.received).toHaveLength(0);

      const approved = await stack.api.post(
        `/v1/agent-runs/${created.json.run_id}/approval`,
        { decision: 'approve', reason: 'checked' },
        { key: t.approverKey },
      );
      expect(approved.status).toBe(200);
      const run = await waitForRun(stack.api, t.key, created.json.run_id, isTerminal);
      expect(run.status).toBe('completed');
      expect(run.approval).toMatchObject({ state: 'approved', decision_reason: 'checked' });
      expect(run.receipt.action_boundary).toEqual({
        effects_requested: ['webhook_delivery:step_1'],
        effects_approved: ['webhook_delivery:step_1'],
        approved_by: [{ effect: 'webhook_delivery:step_1', key_id: t.approverKeyId, name: 'Approver One' }],
        effects_performed: ['webhook_delivery:step_1'],
        effects_not_performed: [],
        effects_outcome_unknown: [],
      });
      expect(run.receipt.verification_class).toBe('verified');
      expect(hook.received).toHaveLength(1);
      expect(hook.received[0]!.headers['idempotency-key']).toBe(`${run.run_id}:step_1`);
      expect((hook.received[0]!.body as { run_id: string }).run_id).toBe(run.run_id);
      // Signed with the tenant's secret (Standard Webhooks), its webhook-id the idempotency key.
      expect(hook.received[0]!.headers['webhook-id']).toBe(`${run.run_id}:step_1`);
      expect(new Webhook(webhookSecret!).verify(hook.received[0]!.raw, hook.received[0]!.headers as Record<string, string>)).toEqual(hook.received[0]!.body);

      // Nothing left to decide: the Update's validator refuses a second decision.
      const again = await stack.api.post(`/v1/agent-runs/${run.run_id}/approval`, { decision: 'approve' }, { key: t.approverKey });
      expect(again.status).toBe(409);
      expect(again.json.error.code).toBe('run_not_awaiting_approval');
    } finally {
      await hook.close();
    }
  });

  it('a rejection fails the run, performs nothing and releases the hold', async () => {
    const t = await newTenant(db);
    const created = await create(t, { input: 'Compile the release notes and tell the team that they are out.' });
    await waitForRun(stack.api, t.key, created.json.run_id, (r) => r.status === 'awaiting_approval');
    const rejected = await stack.api.post(`/v1/agent-runs/${created.json.run_id}/approval`, { decision: 'reject', reason: 'not yet' }, { key: t.approverKey });
    expect(rejected.status).toBe(200);
    const run = await waitForRun(stack.api, t.key, created.json.run_id, isTerminal);
    expect(run.status).toBe('failed');
    expect(run.failure).toEqual({ code: 'approval_rejected', message: 'Approval rejected: not yet' });
    expect(run.approval.state).toBe('rejected');
    const { holds, charges } = await ledgerOf(run.run_id);
    expect(holds.map((h) => h.status)).toEqual(['released']);
    expect(charges).toEqual([]);
  });

  it('the same request with the same Idempotency-Key answers the same way', async () => {
    const t = await newTenant(db);
    const created = await create(t, { input: 'Check the backlog and notify the team channel that the backlog is clear.' });
    await waitForRun(stack.api, t.key, created.json.run_id, (r) => r.status === 'awaiting_approval');
    const path = `/v1/agent-runs/${created.json.run_id}/approval`;
    const headers = { 'idempotency-key': 'decision-1' };
    const first = await stack.api.post(path, { decision: 'reject' }, { key: t.approverKey, headers });
    const second = await stack.api.post(path, { decision: 'reject' }, { key: t.approverKey, headers });
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    const run = await waitForRun(stack.api, t.key, created.json.run_id, isTerminal);
    expect(run.status).toBe('failed');
  });

  it('accepts the decision as the `approval` signal, as an operator sends it', async () => {
    const t = await newTenant(db);
    const created = await create(t, { input: 'Post to finance: the open invoices are paid.' });
    await waitForRun(stack.api, t.key, created.json.run_id, (r) => r.status === 'awaiting_approval');
    await temporal.workflow.getHandle(created.json.run_id).signal('approval', { decision: 'approve' });
    const run = await waitForRun(stack.api, t.key, created.json.run_id, isTerminal);
    expect(run.approval.state).toBe('approved');
    // No webhook configured for this tenant: approved, but the effect stays unresolved.
    expect(run.status).toBe('needs_attention');
    expect(run.failure.code).toBe('unresolved_remainder');
    expect(run.receipt.unresolved).toEqual([
      'part 1 "Post to finance: the open invoices are paid.": not done; webhook_delivery not_configured: No webhook URL is configured for this tenant.',
    ]);
    expect(run.receipt.verification_class).toBe('unverified');
    expect(run.receipt.action_boundary.effects_not_performed).toEqual(['webhook_delivery:step_1']);
    expect(run.receipt.action_boundary.effects_performed).toEqual([]);
  });

  it('refuses a malformed decision with 400', async () => {
    const t = await newTenant(db);
    const created = await create(t, { input: 'Summarise the notes. The launch moved to May.' });
    const r = await stack.api.post(`/v1/agent-runs/${created.json.run_id}/approval`, { decision: 'maybe' }, { key: t.approverKey });
    expect(r.status).toBe(400);
    expect(r.json.error.param).toBe('decision');
  });
});

describe('the run model', () => {
  it("prices the estimate and the hold at the chosen model's rate, the same as POST /v1/usage/estimate", async () => {
    const t = await newTenant(db);
    const input = 'Summarise the release checklist. Tests pass and docs are done.';
    const run = await waitForRun(stack.api, t.key, (await create(t, { input, model: 'svc-workspace-quality' })).json.run_id, isTerminal);
    expect(run.model).toBe('svc-workspace-quality');
    expect(run.estimate).toMatchObject({ model: 'svc-workspace-quality', provider: 'local', terms: { credits_per_1k_tokens: 4 } });
    const fast = await stack.api.post('/v1/usage/estimate', { input, model: 'svc-workspace-fast' }, { key: t.key });
    const quality = await stack.api.post('/v1/usage/estimate', { input, model: 'svc-workspace-quality' }, { key: t.key });
    expect(quality.json.amounts).toEqual(run.estimate.amounts);
    expect(fast.json.terms.credits_per_1k_tokens).toBe(1);
    expect(fast.json.amounts.model).toBeLessThan(quality.json.amounts.model);
    expect((await ledgerOf(run.run_id)).holds[0]!.amount).toBe(run.estimate.amounts.total);
    const models = await stack.api.get('/v1/models', { key: t.key });
    expect(models.json.data.map((m: { id: string; credits_per_1k_tokens: number }) => [m.id, m.credits_per_1k_tokens])).toEqual([
      ['svc-workspace', 2],
      ['svc-workspace-fast', 1],
      ['svc-workspace-quality', 4],
    ]);
  });

  it('answers 404 model_not_found for an unknown model, as chat does, and creates nothing', async () => {
    const t = await newTenant(db);
    const r = await create(t, { input: 'Summarise the notes. The launch moved to May.', model: 'gpt-unknown' }, 'model-404');
    expect(r.status).toBe(404);
    expect(r.json.error).toMatchObject({ type: 'not_found', code: 'model_not_found', param: 'model' });
    expect(await db.select().from(runs).where(eq(runs.tenantId, t.tenantId))).toEqual([]);
  });

  it('refuses creation with 409 model_not_routable, storing nothing, when the routing policy names an upstream this deployment does not have', async () => {
    const t = await newTenant(db);
    await setRoute(db, t.tenantId, 'svc-workspace', 'upstream'); // written when the deployment had an upstream
    const r = await create(t, { input: 'Summarise the notes. The launch moved to May.' }, 'unroutable');
    expect(r.status).toBe(409);
    expect(r.json.error).toMatchObject({ type: 'invalid_request_error', code: 'model_not_routable', param: 'model' });
    expect(r.headers.get('x-should-retry')).toBe('false');
    expect(await db.select().from(runs).where(eq(runs.tenantId, t.tenantId))).toEqual([]);
  });

  it('needs attention, charging nothing, when a run admitted earlier meets a routing policy naming an upstream this deployment does not have', async () => {
    const t = await newTenant(db);
    // Admitted while the provider existed (the API refuses it now): stored and started as the API does.
    const admitted = await storedRun(db, t.tenantId, 'Summarise the notes. The launch moved to May.');
    await setRoute(db, t.tenantId, 'svc-workspace', 'upstream');
    await startRunWorkflow(temporal, { taskQueue: stack.taskQueue, approvalTimeoutMs: 60_000 }, admitted);
    const run = await waitForRun(stack.api, t.key, admitted.id, isTerminal);
    expect(run.status).toBe('needs_attention');
    expect(run.estimate.provider).toBe('upstream');
    expect(run.failure.code).toBe('model_unavailable');
    expect(run.usage).toMatchObject({ model_calls: 0, charged: 0 });
    expect((await ledgerOf(run.run_id)).charges).toEqual([]);
  });

  it('treats an omitted model and the default model as the same request for the Idempotency-Key', async () => {
    const t = await newTenant(db);
    const first = await create(t, { input: 'Summarise the notes. The launch moved to May.' }, 'same-model');
    const second = await create(t, { input: 'Summarise the notes. The launch moved to May.', model: 'svc-workspace' }, 'same-model');
    const other = await create(t, { input: 'Summarise the notes. The launch moved to May.', model: 'svc-workspace-fast' }, 'same-model');
    expect([first.status, second.status, other.status]).toEqual([201, 200, 422]);
    expect(second.json.run_id).toBe(first.json.run_id);
  });
});

describe('honest outcomes on the local provider', () => {
  it('never reports actions no tool can perform as done: delete and pay end needs_attention, unverified', async () => {
    const t = await newTenant(db);
    const created = await create(t, { input: 'Delete the old S3 buckets and pay the vendor invoice.' });
    const run = await waitForRun(stack.api, t.key, created.json.run_id, isTerminal);
    expect(run.status).toBe('needs_attention');
    expect(run.failure.code).toBe('unresolved_remainder');
    expect(run.receipt.verification_class).toBe('unverified');
    expect(run.receipt.unresolved).toEqual([
      'part 1 "Delete the old S3 buckets and": not done; asks to delete, and no configured tool can do that; it was not done.',
      'part 2 "pay the vendor invoice.": not done; asks to pay, and no configured tool can do that; it was not done.',
    ]);
    expect(run.receipt.action_boundary).toMatchObject({
      // No call was made for either: the parts asking for them are in receipt.actions, not performed.
      effects_requested: [],
      effects_performed: [],
      effects_not_performed: [],
      effects_outcome_unknown: [],
    });
    expect(run.plan.gaps.map((g: { action: number }) => g.action)).toEqual([1, 2]);
    expect(run.receipt.actions.map((a: { kind: string; outcome: string }) => [a.kind, a.outcome])).toEqual([
      ['effect', 'not_performed'],
      ['effect', 'not_performed'],
    ]);
  });

  it('covers every sentence of a six-sentence input; what it cannot do is unresolved, nothing is dropped', async () => {
    const t = await newTenant(db);
    const input = [
      'Review the incident report from Tuesday: the outage lasted an hour.',
      'Summarise the customer impact in two lines.',
      'List the services that failed.',
      'Identify the root cause and the contributing factors.',
      'Then book a meeting room for the postmortem on Friday.',
      'Finally buy the extra monitoring licences.',
    ].join(' ');
    const run = await waitForRun(stack.api, t.key, (await create(t, { input })).json.run_id, isTerminal);
    expect(run.status).toBe('needs_attention');
    expect(run.receipt.actions.map((a: { kind: string; outcome: string; checked: boolean }) => [a.kind, a.outcome, a.checked])).toEqual([
      ['information', 'not_performed', false],
      ['information', 'not_performed', false],
      ['information', 'not_performed', false],
      ['information', 'not_performed', false],
      ['effect', 'not_performed', false],
      ['effect', 'not_performed', false],
    ]);
    expect(run.receipt.unresolved).toHaveLength(6);
    for (const line of run.receipt.unresolved.slice(0, 4)) expect(line).toMatch(/needs a model to \w+/);
    expect(run.receipt.unresolved.slice(4)).toEqual([
      'part 5 "Then book a meeting room for the postmortem on Friday.": not done; asks to book, and no configured tool can do that; it was not done.',
      'part 6 "Finally buy the extra monitoring licences.": not done; asks to buy, and no configured tool can do that; it was not done.',
    ]);
    expect(run.receipt.verification_class).toBe('unverified');
    expect(run.receipt.source_coverage.sources[0]).toMatchObject({ units_total: 6 });
  });

  it('prepares every sentence of a long analysis-only input in at most 8 steps, and lists each of the 12 as unresolved, none dropped', async () => {
    const t = await newTenant(db);
    const input = Array.from({ length: 12 }, (_, i) => `Summarise part ${i + 1} of the quarterly review.`).join(' ');
    const run = await waitForRun(stack.api, t.key, (await create(t, { input })).json.run_id, isTerminal);
    expect(run.status).toBe('needs_attention');
    expect(run.receipt.verification_class).toBe('unverified');
    expect(run.receipt.actions).toHaveLength(12);
    expect(run.receipt.actions.every((a: { outcome: string }) => a.outcome === 'not_performed')).toBe(true);
    expect(run.receipt.unresolved).toHaveLength(12);
    expect(run.plan.steps.length).toBeLessThanOrEqual(8);
    expect(run.plan.gaps.map((g: { action: number }) => g.action)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
  });
});

describe('a delivery whose outcome is unknown', () => {
  it('a webhook that times out after receiving the POST is outcome_unknown, sent once, and the run needs attention', async () => {
    const slow = await startRunStack({ WEBHOOK_TIMEOUT_MS: '300' });
    const hook = await webhookReceiver({ delayMs: 2_000 });
    try {
      const t = await newTenant(slow.app.database.db);
      await setWebhookUrl(slow.app.database.db, t.name, hook.url, { allowLoopback: true });
      const created = await slow.api.post('/v1/agent-runs', { input: 'Tell the on-call channel that the incident timeline is ready.' }, { key: t.key });
      await waitForRun(slow.api, t.key, created.json.run_id, (r) => r.status === 'awaiting_approval');
      await slow.api.post(`/v1/agent-runs/${created.json.run_id}/approval`, { decision: 'approve' }, { key: t.approverKey });
      const run = await waitForRun(slow.api, t.key, created.json.run_id, isTerminal);
      expect(run.status).toBe('needs_attention');
      expect(run.result.steps[0]).toMatchObject({ step_id: 'step_1', status: 'outcome_unknown' });
      expect(run.receipt.action_boundary).toMatchObject({
        effects_requested: ['webhook_delivery:step_1'],
        effects_approved: ['webhook_delivery:step_1'],
        effects_performed: [],
        effects_not_performed: [],
        effects_outcome_unknown: ['webhook_delivery:step_1'],
      });
      expect(run.receipt.unresolved).toHaveLength(1);
      expect(run.receipt.unresolved[0]).toMatch(/^part 1 "Tell the on-call channel[^"]*": the outcome of step_1 is unknown; check with the receiver\.$/);
      expect(run.receipt.verification_class).toBe('unverified');
      // Sent once: a retry could have repeated an effect that may already have happened.
      expect(hook.received).toHaveLength(1);
    } finally {
      await hook.close();
      await slow.close();
    }
  });
});

describe('approval deadline', () => {
  it('ends needs_attention, does nothing external and releases the hold', async () => {
    const short = await startRunStack({ APPROVAL_TIMEOUT_SECONDS: '2' });
    try {
      const t = await newTenant(short.app.database.db);
      const created = await short.api.post('/v1/agent-runs', { input: 'Prepare the summary and tell the team that it is out.' }, { key: t.key });
      const run = await waitForRun(short.api, t.key, created.json.run_id, isTerminal);
      expect(run.status).toBe('needs_attention');
      expect(run.failure.code).toBe('approval_expired');
      expect(run.approval.state).toBe('expired');
      expect((await ledgerOf(run.run_id)).holds.map((h) => h.status)).toEqual(['released']);
    } finally {
      await short.close();
    }
  });
});

describe('cancel', () => {
  it('stops a waiting run, releases the hold, and refuses a second cancel', async () => {
    const t = await newTenant(db);
    const created = await create(t, { input: 'Draft the customer letter and tell the mailing list that it is ready.' });
    await waitForRun(stack.api, t.key, created.json.run_id, (r) => r.status === 'awaiting_approval');
    const cancel = await stack.api.post(`/v1/agent-runs/${created.json.run_id}/cancel`, undefined, { key: t.key });
    expect(cancel.status).toBe(202);
    const run = await waitForRun(stack.api, t.key, created.json.run_id, isTerminal);
    expect(run.status).toBe('failed');
    expect(run.failure.code).toBe('cancelled');
    expect(run.approval.state).toBe('cancelled');
    expect(await ledgerOf(run.run_id)).toMatchObject({ holds: [expect.objectContaining({ status: 'released' })], charges: [] });
    const again = await stack.api.post(`/v1/agent-runs/${run.run_id}/cancel`, undefined, { key: t.key });
    expect(again.status).toBe(409);
    expect(again.json.error.code).toBe('run_already_terminal');
  });
});

describe('idempotent creation', () => {
  it('replays the same run for the same key and body, creating nothing', async () => {
    const t = await newTenant(db);
    const body = { input: 'Outline the onboarding plan for new support staff. Staff start on Monday.', memory: false };
    const first = await create(t, body, 'key-A');
    const second = await create(t, body, 'key-A');
    expect(first.status).toBe(201);
    expect(second.status).toBe(200);
    expect(second.json.run_id).toBe(first.json.run_id);
    await waitForRun(stack.api, t.key, first.json.run_id, isTerminal);
    const third = await create(t, body, 'key-A');
    expect(third.status).toBe(200);
    expect(third.json.status).toBe('needs_attention'); // the local provider performs no analysis
    const rows = await db.select().from(runs).where(eq(runs.tenantId, t.tenantId));
    expect(rows).toHaveLength(1);
    expect((await ledgerOf(first.json.run_id)).charges).toHaveLength(1);
  });

  it('answers 422 for the same key with a different body', async () => {
    const t = await newTenant(db);
    await create(t, { input: 'First body' }, 'key-B');
    const r = await create(t, { input: 'Second body' }, 'key-B');
    expect(r.status).toBe(422);
    expect(r.json.error).toMatchObject({ code: 'idempotency_key_reused', param: 'Idempotency-Key' });
  });

  it('scopes keys to the tenant, and without a key every request is a new run', async () => {
    const a = await newTenant(db);
    const b = await newTenant(db);
    const ra = await create(a, { input: 'Same text' }, 'shared-key');
    const rb = await create(b, { input: 'Same text' }, 'shared-key');
    expect(rb.status).toBe(201);
    expect(rb.json.run_id).not.toBe(ra.json.run_id);
    const n1 = await create(a, { input: 'No key' });
    const n2 = await create(a, { input: 'No key' });
    expect(n1.json.run_id).not.toBe(n2.json.run_id);
  });

  it('rejects an unusable Idempotency-Key and bad bodies with 400', async () => {
    const t = await newTenant(db);
    const badKey = await create(t, { input: 'x' }, 'has space');
    expect(badKey.status).toBe(400);
    expect(badKey.json.error).toMatchObject({ code: 'invalid_idempotency_key', param: 'Idempotency-Key' });
    expect((await create(t, { input: '' })).json.error.param).toBe('input');
    expect((await create(t, { input: 'x', memory: 'yes' })).json.error.param).toBe('memory');
    expect((await create(t, { input: 'x', priority: 1 })).json.error).toMatchObject({ code: 'unsupported_parameter', param: 'priority' });
  });
});

describe('tenant isolation', () => {
  it("hides one tenant's runs, events and usage from another on every route", async () => {
    const a = await newTenant(db);
    const b = await newTenant(db);
    const created = await create(a, { input: 'Prepare the board pack and tell the board that it is ready.' });
    const id = created.json.run_id;
    await waitForRun(stack.api, a.key, id, (r) => r.status === 'awaiting_approval');
    expect((await stack.api.get(`/v1/agent-runs/${id}`, { key: b.key })).status).toBe(404);
    expect((await stack.api.post(`/v1/agent-runs/${id}/approval`, { decision: 'approve' }, { key: b.approverKey })).status).toBe(404);
    expect((await stack.api.post(`/v1/agent-runs/${id}/cancel`, undefined, { key: b.key })).status).toBe(404);
    expect((await stack.api.get('/v1/agent-runs', { key: b.key })).json.data).toEqual([]);
    expect((await stack.api.get('/v1/agent-runs/export', { key: b.key })).text).toBe('');
    expect((await stack.api.get('/v1/journey-events', { key: b.key })).json.data).toEqual([]);
    expect((await stack.api.get('/v1/usage', { key: b.key })).json.open_reservations).toEqual([]);
    expect((await stack.api.get(`/v1/agent-runs/${id}`, { key: a.key })).status).toBe(200);
    await stack.api.post(`/v1/agent-runs/${id}/cancel`, undefined, { key: a.key });
  });
});

describe('journey events', () => {
  it('record every state change without any input text', async () => {
    const t = await newTenant(db);
    const marker = 'ZEBRA-MARKER-91c4';
    const created = await create(t, { input: `Audit the ${marker} ledger; then report the gaps.` });
    await waitForRun(stack.api, t.key, created.json.run_id, isTerminal);
    const r = await stack.api.get('/v1/journey-events?limit=100', { key: t.key });
    expect(r.status).toBe(200);
    expect(r.text).not.toContain(marker);
    const kinds = (r.json.data as { kind: string }[]).map((e) => e.kind).reverse();
    expect(kinds).toEqual([
      'run.accepted',
      'run.planning',
      'run.step.reserve',
      'run.step.plan',
      'run.executing',
      'run.step_finished',
      'run.step_finished',
      'run.verifying',
      'run.step.settle',
      'run.needs_attention',
    ]);
    const rows = await db.select().from(journeyEvents).where(eq(journeyEvents.tenantId, t.tenantId));
    expect(JSON.stringify(rows)).not.toContain(marker);
  });

  it('honours limit (1 to 100, default 50) and rejects anything else', async () => {
    const t = await newTenant(db);
    await waitForRun(stack.api, t.key, (await create(t, { input: 'One; two; three; four.' })).json.run_id, isTerminal);
    expect((await stack.api.get('/v1/journey-events?limit=2', { key: t.key })).json.data).toHaveLength(2);
    expect((await stack.api.get('/v1/journey-events', { key: t.key })).json.data.length).toBeGreaterThan(2);
    for (const bad of ['0', '101', 'ten', '2.5']) {
      const r = await stack.api.get(`/v1/journey-events?limit=${bad}`, { key: t.key });
      expect(r.status).toBe(400);
      expect(r.json.error.param).toBe('limit');
    }
  });
});

describe('memory', () => {
  it('memory false neither reads nor writes the memory store', async () => {
    const t = await newTenant(db);
    await rememberEntry(db, {
      tenantId: t.tenantId,
      subject: 'pricing policy',
      content: 'Discounts above 20% need finance approval.',
      source: 'test',
      entryKey: `seed-${t.tenantId}`,
    });
    const run = await waitForRun(
      stack.api,
      t.key,
      (await create(t, { input: 'Explain our pricing policy on discounts.', memory: false })).json.run_id,
      isTerminal,
    );
    expect(run.plan.steps.map((s: { tool: string }) => s.tool)).not.toContain('memory_recall');
    expect(run.receipt.source_coverage.sources.map((s: { source: string }) => s.source)).toEqual(['input']);
    const entries = await db.select().from(memoryEntries).where(eq(memoryEntries.tenantId, t.tenantId));
    expect(entries.map((e) => e.source)).toEqual(['test']);
  });

  it('memory true recalls relevant entries, names them in the receipt, and remembers the run', async () => {
    const t = await newTenant(db);
    const seeded = await rememberEntry(db, {
      tenantId: t.tenantId,
      subject: 'pricing policy',
      content: 'Discounts above 20% need finance approval.',
      source: 'test',
      entryKey: `seed2-${t.tenantId}`,
    });
    const run = await waitForRun(
      stack.api,
      t.key,
      (await create(t, { input: 'Explain our pricing policy on discounts.', memory: true })).json.run_id,
      isTerminal,
    );
    expect(run.status).toBe('needs_attention'); // recalled, but explaining needs a model
    expect(run.plan.steps[0].tool).toBe('memory_recall');
    // By reference only: the recalled text stays in the vault (tests/forget.test.ts).
    const recalled = 'Discounts above 20% need finance approval.';
    expect(run.result.steps[0].output.entries).toEqual([{ id: seeded, version: 1, digest: digestOf(recalled), characters: recalled.length }]);
    expect(JSON.stringify(run)).not.toContain('finance approval');
    expect(run.receipt.source_coverage.sources.map((s: { source: string }) => s.source)).toEqual(['input', `memory:${seeded}`]);
    expect(run.receipt.source_coverage.sources[1]).toMatchObject({ digest: digestOf(recalled), characters: recalled.length });
    const entries = await db.select().from(memoryEntries).where(eq(memoryEntries.tenantId, t.tenantId));
    expect(entries.map((e) => e.source).sort()).toEqual([`run:${run.run_id}`, 'test']);
    // The run remembers its input and its outcome line (counts only).
    const remembered = entries.find((e) => e.source === `run:${run.run_id}`)!;
    expect(remembered.content).toBe(
      "Explain our pricing policy on discounts.\n\nOutcome: 0 of 1 part(s) of the request performed, by the local planner's report (no model; the input and the recalled memory entries were read) and the tool results; 1 item(s) unresolved, see receipt.unresolved.",
    );
  });
});

describe('run history', () => {
  it('filters by status, time and text, pages with a cursor, and exports NDJSON', async () => {
    const t = await newTenant(db);
    const ids: string[] = [];
    for (const word of ['alpha', 'beta', 'gamma']) ids.push((await create(t, { input: `Review the ${word} report.` })).json.run_id);
    for (const id of ids) await waitForRun(stack.api, t.key, id, isTerminal);

    const page1 = await stack.api.get('/v1/agent-runs?limit=2', { key: t.key });
    expect(page1.json.data.map((r: { run_id: string }) => r.run_id)).toEqual([ids[2], ids[1]]);
    expect(page1.json.has_more).toBe(true);
    const page2 = await stack.api.get(`/v1/agent-runs?limit=2&cursor=${page1.json.next_cursor}`, { key: t.key });
    expect(page2.json.data.map((r: { run_id: string }) => r.run_id)).toEqual([ids[0]]);
    expect(page2.json.has_more).toBe(false);
    expect(page2.json.next_cursor).toBeNull();

    const text = await stack.api.get('/v1/agent-runs?q=BETA', { key: t.key });
    expect(text.json.data.map((r: { run_id: string }) => r.run_id)).toEqual([ids[1]]);
    expect((await stack.api.get('/v1/agent-runs?status=failed', { key: t.key })).json.data).toEqual([]);
    expect((await stack.api.get('/v1/agent-runs?status=completed', { key: t.key })).json.data).toEqual([]);
    expect((await stack.api.get('/v1/agent-runs?status=needs_attention', { key: t.key })).json.data).toHaveLength(3);
    const future = new Date(Date.now() + 60_000).toISOString();
    expect((await stack.api.get(`/v1/agent-runs?created_after=${encodeURIComponent(future)}`, { key: t.key })).json.data).toEqual([]);
    expect((await stack.api.get('/v1/agent-runs?status=done', { key: t.key })).status).toBe(400);
    expect((await stack.api.get('/v1/agent-runs?cursor=garbage', { key: t.key })).json.error.code).toBe('invalid_cursor');

    const exported = await stack.api.get('/v1/agent-runs/export?q=report', { key: t.key });
    expect(exported.status).toBe(200);
    expect(exported.headers.get('content-type')).toContain('application/x-ndjson');
    const lines = exported.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((r) => r.run_id)).toEqual([ids[2], ids[1], ids[0]]);
  });
});

describe('Temporal visibility', () => {
  it('keeps RunStatus and TenantId current so runs filter in the UI', async () => {
    const t = await newTenant(db);
    const run = await waitForRun(stack.api, t.key, (await create(t, { input: 'Tidy the glossary.' })).json.run_id, isTerminal);
    // The row is written by a local activity before the workflow task that upserts the attribute
    // completes, so Temporal can be a moment behind the API: wait for it, briefly.
    const attrsNow = async () => (await temporal.workflow.getHandle(run.run_id).describe()).typedSearchAttributes.getAll().map((p) => [p.key.name, p.value]);
    let attrs = await attrsNow();
    for (let i = 0; i < 50 && !attrs.some(([k, v]) => k === 'RunStatus' && v === run.status); i++) {
      await new Promise((r) => setTimeout(r, 100));
      attrs = await attrsNow();
    }
    expect(run.status).toBe('needs_attention');
    expect(attrs).toEqual(
      expect.arrayContaining([
        ['RunStatus', 'needs_attention'],
        ['TenantId', t.tenantId],
      ]),
    );
    const state = await temporal.workflow.getHandle(run.run_id).query('state');
    expect(state).toMatchObject({ status: 'needs_attention', stepsDone: 1, stepsTotal: 1 });
    // On a versioned worker the run's input decides where it indexes its status: one upsert, at its
    // end (no operator acted before), and no patch marker (workflows/run-context.ts).
    const { events } = await temporal.workflow.getHandle(run.run_id).fetchHistory();
    const upserted = (events ?? []).flatMap((e) => Object.keys(e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ?? {}));
    expect(upserted).toEqual(['RunStatus']);
    expect((events ?? []).filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch')).toEqual([]);
  });
});

describe('Temporal unreachable at creation', () => {
  it('answers 503; the same Idempotency-Key later starts the stored run, and a keyless run is marked failed', async () => {
    const down = await startTestApp({ TEMPORAL_ADDRESS: '127.0.0.1:1', TASK_QUEUE: stack.taskQueue });
    try {
      const t = await newTenant(db);
      const client = await ApiClient.connect(down.url);
      const body = { input: 'Summarise the quarterly metrics.' };
      const first = await client.post('/v1/agent-runs', body, { key: t.key, headers: { 'idempotency-key': 'outage-1' } });
      expect(first.status).toBe(503);
      expect(first.json.error.code).toBe('service_unavailable');
      const retried = await create(t, body, 'outage-1');
      expect(retried.status).toBe(200);
      const run = await waitForRun(stack.api, t.key, retried.json.run_id, isTerminal);
      expect(run.status).toBe('needs_attention');
      expect(run.receipt).not.toBeNull(); // it ran to the end

      const keyless = await client.post('/v1/agent-runs', body, { key: t.key });
      expect(keyless.status).toBe(503);
      const failed = (await stack.api.get('/v1/agent-runs?status=failed', { key: t.key })).json.data;
      expect(failed).toHaveLength(1);
      expect(failed[0].failure.code).toBe('start_failed');
    } finally {
      await down.close();
    }
  });
});
