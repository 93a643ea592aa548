// Runs on an upstream model planned by the plan schema (UPSTREAM_PROTOCOL=plan: the protocol of runs
// started before the tool-calling protocol, kept while such runs exist): the agent loop inside the
// workflow's steps, against a scripted OpenAI-compatible upstream the test starts, with the real API,
// worker, Temporal dev server and Postgres. The default protocol: tests/agent-runs.test.ts.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runModelCalls } from '../db/schema.ts';
import { TOOL_IDS, TOOLS } from '../domain/tools.ts';
import { setRoute } from '../services/routing.ts';
import { setWebhookUrl } from '../services/tenants.ts';
import { scriptedUpstream, webhookReceiver } from './support/fake-servers.ts';
import { isTerminal, ledgerOf, newTenant, type RunStack, startRunStack, type TestTenant, waitForRun } from './support/run-stack.ts';

let stack: RunStack;
let upstream: Awaited<ReturnType<typeof scriptedUpstream>>;
let hook: Awaited<ReturnType<typeof webhookReceiver>>;

beforeAll(async () => {
  upstream = await scriptedUpstream();
  hook = await webhookReceiver();
  stack = await startRunStack({ UPSTREAM_BASE_URL: upstream.url, UPSTREAM_MODEL_MAP: '{"svc-workspace":"scripted-model"}', UPSTREAM_PROTOCOL: 'plan' });
});
afterAll(async () => {
  await stack.close();
  await upstream.close();
  await hook.close();
});
beforeEach(() => {
  hook.received.length = 0;
});

const db = () => stack.app.database.db;

/** A tenant whose svc-workspace runs go to the upstream, with a webhook configured. */
async function upstreamTenant(): Promise<TestTenant> {
  const t = await newTenant(db());
  await setRoute(db(), t.tenantId, 'svc-workspace', 'upstream');
  await setWebhookUrl(db(), t.name, hook.url, { allowLoopback: true });
  return t;
}

const plan = (steps: object[], unresolved: object[] = [], answer: number[] = []) => ({ content: JSON.stringify({ steps, answer, unresolved }) });
/** A final answer in the service's per-action shape (domain/agent/plan-schema.ts ANSWER_FORMAT). */
const answer = (parts: Record<number, string>) => ({
  content: JSON.stringify({ actions: Object.entries(parts).map(([n, result]) => ({ action: Number(n), status: 'performed', result })) }),
});
const analyse = (text: string, covers: number[]) => ({ tool: 'text_analysis', arguments: { text }, purpose: 'Analyse the request', covers });
const deliver = (covers: number[], extra: object = {}) => ({ tool: 'webhook_delivery', arguments: {}, purpose: 'Send the summary', covers, ...extra });

async function startRun(t: TestTenant, input: string) {
  const created = await stack.api.post('/v1/agent-runs', { input }, { key: t.key });
  expect(created.status).toBe(201);
  return created.json.run_id as string;
}

async function modelCallsOf(runId: string) {
  return db().select().from(runModelCalls).where(eq(runModelCalls.runId, runId));
}

describe('an upstream run', () => {
  it('plans as structured output, waits for approval, calls tools turn by turn and completes: the delivery checked, the summary resting on its part of the answer', async () => {
    const t = await upstreamTenant();
    const finalAnswer = answer({ 1: 'The database failed over at 09:12 and service was back by 09:40.', 2: 'The summary was delivered to your webhook.' });
    upstream.load([
      plan([analyse('the incident timeline', [1]), deliver([2])], [], [1]),
      { tool_calls: [{ name: 'text_analysis', arguments: { text: 'Summarise the incident timeline: the database failed over at 09:12.' } }] },
      { tool_calls: [{ name: 'webhook_delivery', arguments: {} }] },
      finalAnswer,
    ]);
    const runId = await startRun(t, 'Summarise the incident timeline and tell the on-call channel that the incident is closed.');
    const waiting = await waitForRun(stack.api, t.key, runId, (r) => r.status === 'awaiting_approval' || isTerminal(r));
    expect(waiting.status).toBe('awaiting_approval');
    expect(waiting.estimate).toMatchObject({ model: 'svc-workspace', provider: 'upstream', basis: { max_turns: 6, max_tool_calls: 8 } });
    expect(waiting.plan.planner).toBe('model');
    expect(waiting.plan.steps.map((s: { tool: string; effect: string }) => [s.tool, s.effect])).toEqual([
      ['text_analysis', 'read'],
      ['webhook_delivery', 'external'],
    ]);
    expect(hook.received).toHaveLength(0);

    // The planning request: the service's plan schema, as structured output, to the mapped model.
    const planning = upstream.seen[0]!.body;
    expect(planning.model).toBe('scripted-model');
    expect(planning.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'run_plan', strict: true } });
    expect(planning.tools).toBeUndefined();

    await stack.api.post(`/v1/agent-runs/${runId}/approval`, { decision: 'approve' }, { key: t.approverKey });
    const run = await waitForRun(stack.api, t.key, runId, isTerminal);
    expect(run.status).toBe('completed');
    // The summary is the model's own words (nothing recomputes them), so the run is not fully verified.
    expect(run.receipt.verification_class).toBe('partially_verified');
    expect(run.receipt.unresolved).toEqual([]);
    expect(run.result.answer).toBe(finalAnswer.content);
    expect(run.receipt.digests.answer).toMatch(/^sha256:/);
    expect(run.receipt.actions).toEqual([
      { n: 1, kind: 'analysis', outcome: 'performed', by: ['answer'], checked: false },
      { n: 2, kind: 'delivery', outcome: 'performed', by: ['step_2'], checked: true },
    ]);
    expect(run.receipt.action_boundary).toMatchObject({ effects_performed: ['webhook_delivery:step_2'], effects_outcome_unknown: [] });
    expect(hook.received).toHaveLength(1);

    // Each turn saw the tool results in OpenAI's wire format.
    const second = upstream.seen[2]!.body.messages;
    expect(second.at(-2)).toMatchObject({ role: 'assistant', content: null, tool_calls: [{ type: 'function', function: { name: 'text_analysis' } }] });
    expect(second.at(-1)).toMatchObject({ role: 'tool', tool_call_id: second.at(-2).tool_calls[0].id });
    expect(JSON.parse(second.at(-1).content).status).toBe('done');

    // Charged by reported usage: 4 calls of 120 tokens at 2 credits per 1k are 0.24 credits each, kept exact
    // (240,000 micro-credits) and rounded up once for the run: 1 credit, not 4. Plus the two tools, once.
    const calls = await modelCallsOf(runId);
    expect(calls.map((c) => c.callKey).sort()).toEqual(['plan:1', 'turn:1', 'turn:2', 'turn:3']);
    expect(calls.every((c) => c.promptTokens === 100 && c.completionTokens === 20 && c.costMicro === 240_000 && c.usageBasis === 'reported')).toBe(true);
    expect(run.usage).toMatchObject({
      model_calls: 4,
      input_tokens: 400,
      output_tokens: 80,
      tool_calls: { text_analysis: 1, webhook_delivery: 1 },
      usage_basis: 'reported',
      amount: 1 + 1 + 5,
    });
    const { holds, charges } = await ledgerOf(db(), runId);
    expect(charges.map((c) => c.amount)).toEqual([7]);
    expect(holds[0]!.amount).toBe(run.estimate.amounts.total);
  });

  it('offers the model the built-in catalog of the plan schema, in the OpenAI tools format', async () => {
    const t = await upstreamTenant();
    upstream.load([plan([], [], [1]), answer({ 1: 'The notes cover the budget, the hiring plan and the launch date.' })]);
    const run = await waitForRun(stack.api, t.key, await startRun(t, 'Summarise the notes. The launch moved to May.'), isTerminal);
    expect(run.status).toBe('completed');
    // GET /v1/tools lists the tool-calling protocol's built-ins (the default); this protocol keeps its own.
    const offered = upstream.seen[1]!.body.tools!;
    expect(offered.map((x: { type: string; function: { name: string; description: string } }) => [x.type, x.function.name, x.function.description])).toEqual(
      TOOL_IDS.map((id) => ['function', id, TOOLS[id].description]),
    );
  });

  it('asks again once after a malformed plan, showing the model what was wrong', async () => {
    const t = await upstreamTenant();
    upstream.load([
      { content: 'Sure! Here is my plan: analyse it.' },
      plan([], [], [1]),
      answer({ 1: 'The board approved the budget and deferred the hiring plan.' }),
    ]);
    const run = await waitForRun(stack.api, t.key, await startRun(t, 'Summarise the notes from the board meeting. The budget was approved.'), isTerminal);
    expect(run.status).toBe('completed');
    // No tool needed: the model's answer carries the analysis, and the receipt says so.
    expect(run.receipt.actions).toEqual([{ n: 1, kind: 'analysis', outcome: 'performed', by: ['answer'], checked: false }]);
    expect(run.receipt.verification_class).toBe('unverified');
    expect(upstream.seen[1]!.body.messages.at(-1).content).toContain('Your previous plan was not valid:\n- The answer is not JSON.');
    expect((await modelCallsOf(run.run_id)).map((c) => c.callKey).sort()).toEqual(['plan:1', 'plan:2', 'turn:1']);
  });

  it('ends needs_attention when the plan names an unknown tool twice, charging only the calls made', async () => {
    const t = await upstreamTenant();
    const unknown = plan([{ tool: 'delete_bucket', arguments: { name: 'old' }, purpose: 'Delete it', covers: [1] }]);
    upstream.load([unknown, unknown]);
    const run = await waitForRun(stack.api, t.key, await startRun(t, 'Delete the old S3 buckets.'), isTerminal);
    expect(run.status).toBe('needs_attention');
    expect(run.failure.code).toBe('plan_invalid');
    expect(run.failure.message).toContain('steps[0].tool: "delete_bucket" is not a tool of the catalog.');
    expect(run.plan).toBeNull();
    expect(upstream.seen).toHaveLength(2);
    expect(upstream.seen[1]!.body.messages.at(-1).content).toContain('"delete_bucket" is not a tool of the catalog');
    const { holds, charges } = await ledgerOf(db(), run.run_id);
    // Two calls of 0.24 credits each, rounded up once: 1 credit.
    expect(charges.map((c) => c.amount)).toEqual([1]);
    expect(holds[0]).toMatchObject({ status: 'settled', chargedAmount: 1 });
  });

  it('takes the effect class from the catalog: a webhook the model labels "read" still waits for a person', async () => {
    const t = await upstreamTenant();
    upstream.load([plan([deliver([2], { effect: 'read' }), analyse('the notes', [1])])]);
    const runId = await startRun(t, 'Summarise the notes and send them to the team: the launch moved to May.');
    const waiting = await waitForRun(stack.api, t.key, runId, (r) => r.status === 'awaiting_approval' || isTerminal(r));
    expect(waiting.status).toBe('awaiting_approval');
    expect(waiting.plan.steps[0]).toMatchObject({ tool: 'webhook_delivery', effect: 'external' });
    // It sends the result of action 1, and the approval says so: the message is that answer, written after approval.
    expect(waiting.approval.effects).toEqual([
      {
        step_id: 'step_1',
        tool: 'webhook_delivery',
        why: 'Send the summary',
        arguments: {},
        args_digest: expect.stringMatching(/^sha256:/),
        message_from: { action: 1, request: 'Summarise the notes' },
      },
    ]);
    await stack.api.post(`/v1/agent-runs/${runId}/approval`, { decision: 'reject' }, { key: t.approverKey });
    const run = await waitForRun(stack.api, t.key, runId, isTerminal);
    expect(run.status).toBe('failed');
    expect(hook.received).toHaveLength(0);
  });

  it('refuses an external tool call outside the approved plan; nothing is sent and the run needs attention', async () => {
    const t = await upstreamTenant();
    upstream.load([
      plan([analyse('the notes', [1])]),
      { tool_calls: [{ name: 'webhook_delivery', arguments: {} }] },
      { content: 'I sent the notes to your webhook.' },
    ]);
    const run = await waitForRun(stack.api, t.key, await startRun(t, 'Summarise the notes. The launch moved to May.'), isTerminal);
    expect(run.status).toBe('needs_attention');
    expect(hook.received).toHaveLength(0);
    expect(run.result.steps).toEqual([expect.objectContaining({ step_id: 'call_1_1', tool: 'webhook_delivery', status: 'refused' })]);
    expect(run.receipt.action_boundary).toMatchObject({
      effects_requested: ['webhook_delivery:call_1_1'],
      effects_performed: [],
      effects_not_performed: ['webhook_delivery:call_1_1'],
    });
    expect(run.receipt.unresolved).toContain(
      'call_1_1 (webhook_delivery) refused: webhook_delivery is an external effect and no approved step of the plan is left for it; nothing was sent.',
    );
    // The model's claim of sending is its answer, not a performed effect.
    expect(run.result.answer).toBe('I sent the notes to your webhook.');
  });

  it('does not count actions no tool performs as done, whatever the model answers', async () => {
    const t = await upstreamTenant();
    upstream.load([plan([analyse('buckets and invoice', [1, 2])]), { content: 'Deleted the buckets and paid the invoice.' }]);
    const run = await waitForRun(stack.api, t.key, await startRun(t, 'Delete the old S3 buckets and pay the vendor invoice.'), isTerminal);
    expect(run.status).toBe('needs_attention');
    expect(run.receipt.verification_class).toBe('unverified');
    expect(run.receipt.action_boundary.effects_not_performed).toEqual(['action_1:delete', 'action_2:pay']);
    expect(run.receipt.unresolved).toEqual([
      'action 1 "Delete the old S3 buckets": asks to delete, and no configured tool can do that; it was not done.',
      'action 2 "pay the vendor invoice": asks to pay, and no configured tool can do that; it was not done.',
      'step_1 (text_analysis) was never run.',
    ]);
  });

  it('retries a model call that failed and charges only the one that answered', async () => {
    const t = await upstreamTenant();
    upstream.load([{ status: 500 }, plan([], [], [1]), { status: 503 }, answer({ 1: 'The notes cover the budget and the launch date.' })]);
    const run = await waitForRun(stack.api, t.key, await startRun(t, 'Summarise the notes. The launch moved to May.'), isTerminal);
    expect(run.status).toBe('completed');
    expect(upstream.seen).toHaveLength(4);
    expect((await modelCallsOf(run.run_id)).map((c) => c.callKey).sort()).toEqual(['plan:1', 'turn:1']);
    expect(run.usage.model_calls).toBe(2);
    const { charges } = await ledgerOf(db(), run.run_id);
    expect(charges.map((c) => c.amount)).toEqual([1]);
  });

  it('waits as long as a rate-limited model asks (429 Retry-After, as a full embedded queue answers) and then goes on', async () => {
    const t = await upstreamTenant();
    upstream.load([{ status: 429, retryAfter: 2 }, plan([], [], [1]), answer({ 1: 'The notes cover the budget and the launch date.' })]);
    const run = await waitForRun(stack.api, t.key, await startRun(t, 'Summarise the notes. The launch moved to May.'), isTerminal);
    expect(run.status).toBe('completed');
    expect(upstream.seen).toHaveLength(3);
    expect(upstream.seen[1]!.at - upstream.seen[0]!.at).toBeGreaterThanOrEqual(1_900);
    expect(run.usage.model_calls).toBe(2);
  });

  it('shows an empty plan its problems, asks once more, and ends needs_attention naming each uncovered action when it is empty again', async () => {
    const t = await upstreamTenant();
    upstream.load([plan([]), plan([]), { content: 'Done.' }]);
    const input = 'Summarise the renewal dates in our vendor contracts and flag any auto-renewal clauses: Acme renews on 1 March and auto-renews yearly.';
    const run = await waitForRun(stack.api, t.key, await startRun(t, input), isTerminal);
    expect(run.status).toBe('needs_attention');
    expect(run.failure.code).toBe('plan_empty');
    expect(run.failure.message).toContain('action 1 "Summarise the renewal dates in our vendor contracts"; action 2 "flag any auto-renewal clauses"');
    expect(upstream.seen).toHaveLength(2); // no execute turn: "Done." was never asked for
    expect(upstream.seen[1]!.body.messages.at(-1).content).toContain('The plan is empty');
    expect(run.usage.model_calls).toBe(2);
    // A run that ends at planning still has its receipt: nothing performed, every sentence unresolved with why.
    expect(run.receipt.verification_class).toBe('unverified');
    expect(run.receipt.actions).toEqual([]);
    expect(run.receipt.unresolved.slice(0, 2)).toEqual([
      'The request was not accounted for: the run stopped before the model reported (plan_empty).',
      expect.stringMatching(/^sentence 1 "Summarise the renewal dates in our vendor contracts and flag any auto-renewal clauses: .*": not done\.$/),
    ]);
  });

  it("asks for a plan in the request's own schema, one required entry per action from its options, and runs the plan it gets", async () => {
    const t = await upstreamTenant();
    const exact = { action_1: { do: 'answer' }, action_2: { do: 'webhook_delivery', arguments: {}, purpose: 'Send the summary' } };
    upstream.load([{ content: JSON.stringify(exact) }]);
    const runId = await startRun(t, 'Summarise the incident timeline and tell the on-call channel that the incident is closed.');
    const waiting = await waitForRun(stack.api, t.key, runId, (r) => r.status === 'awaiting_approval' || isTerminal(r));
    expect(waiting.status).toBe('awaiting_approval');
    expect(waiting.plan).toMatchObject({ steps: [{ tool: 'webhook_delivery', covers: [2] }], answer: [1] });
    const schema = upstream.seen[0]!.body.response_format.json_schema.schema;
    expect(schema.required).toEqual(['action_1', 'action_2']);
    expect(schema.additionalProperties).toBe(false);
    const choices = (entry: { anyOf: { properties: { do: { const: string } } }[] }) => entry.anyOf.map((b) => b.properties.do.const);
    expect(choices(schema.properties.action_1)).toEqual(['answer', 'count_list_items', 'find_contact_details', 'unresolved']);
    expect(choices(schema.properties.action_2)).toEqual(['webhook_delivery', 'unresolved']);
    expect(upstream.seen[0]!.body.max_tokens).toBeGreaterThanOrEqual(1024);
    await stack.api.post(`/v1/agent-runs/${runId}/approval`, { decision: 'reject' }, { key: t.approverKey });
    const run = await waitForRun(stack.api, t.key, runId, isTerminal);
    // Rejected: the receipt says the effect was requested, not approved, not performed.
    expect(run.status).toBe('failed');
    expect(run.receipt.action_boundary).toMatchObject({ effects_requested: ['webhook_delivery:step_1'], effects_approved: [], effects_performed: [] });
    expect(run.receipt.unresolved[0]).toMatch(/^action 1 "Summarise the incident timeline": not done; the run ended failed at approval \(approval_rejected\)/);
  });

  it('counts nothing performed when the answer only says it is done, whatever the plan promised', async () => {
    const t = await upstreamTenant();
    upstream.load([plan([], [], [1, 2]), { content: 'Done.' }]);
    const run = await waitForRun(
      stack.api,
      t.key,
      await startRun(
        t,
        'Summarise the renewal dates in our vendor contracts and flag any auto-renewal clauses: Acme renews on 1 March and auto-renews yearly.',
      ),
      isTerminal,
    );
    expect(run.status).toBe('needs_attention');
    expect(run.receipt.actions.map((a: { outcome: string }) => a.outcome)).toEqual(['not_performed', 'not_performed']);
    expect(run.receipt.unresolved).toEqual([
      'action 1 "Summarise the renewal dates in our vendor contracts": not done; the model\'s answer has no part for this action.',
      'action 2 "flag any auto-renewal clauses": not done; the model\'s answer has no part for this action.',
    ]);
    // The final answer was asked for in the per-action shape.
    expect(upstream.seen[1]!.body.messages[0].content).toContain('{"actions":[{"action":<number>,"status":"performed"');
  });

  it('stops needs_attention when reported usage would pass the hold, and never charges more than the hold', async () => {
    const t = await upstreamTenant();
    upstream.load([{ ...plan([analyse('the notes', [1])]), usage: { prompt_tokens: 5_000_000, completion_tokens: 10 } }]);
    const run = await waitForRun(stack.api, t.key, await startRun(t, 'Summarise the notes. The launch moved to May.'), isTerminal);
    expect(run.status).toBe('needs_attention');
    expect(run.failure.code).toBe('hold_exhausted');
    expect(upstream.seen).toHaveLength(1);
    const { holds, charges } = await ledgerOf(db(), run.run_id);
    expect(charges.map((c) => c.amount)).toEqual([holds[0]!.amount]);
    expect(run.usage.charged).toBe(holds[0]!.amount);
    expect(run.usage.released).toBe(0);
  });

  it('makes no model call whose worst case would pass what the hold has left', async () => {
    const t = await upstreamTenant();
    // The plan call reports most of the hold spent; the next turn's worst case no longer fits.
    const hold = (await stack.api.post('/v1/usage/estimate', { input: 'Summarise the notes. The launch moved to May.' }, { key: t.key })).json.amounts.total;
    upstream.load([{ ...plan([analyse('the notes', [1])]), usage: { prompt_tokens: (hold - 2) * 500, completion_tokens: 0 } }, { content: 'never asked' }]);
    const run = await waitForRun(stack.api, t.key, await startRun(t, 'Summarise the notes. The launch moved to May.'), isTerminal);
    expect(run.status).toBe('needs_attention');
    expect(run.failure.code).toBe('hold_exhausted');
    expect(run.failure.message).toMatch(/The next model call could cost up to \d+ credits; 2 of the \d+ held remain/);
    expect(upstream.seen).toHaveLength(1);
    expect(run.usage.charged).toBeLessThanOrEqual(hold);
  });
});
