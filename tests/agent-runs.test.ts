// Runs on an upstream model, by the tool-calling protocol (the default; docs/runs.md, "The
// tool-calling protocol"): against a scripted OpenAI-compatible upstream the test starts, with the
// real API, worker, Temporal dev server and Postgres. The model chooses tools from the whole catalog;
// the service decides only which calls run, when, and what the report can claim.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runModelCalls } from '../db/schema.ts';
import { setRoute } from '../services/routing.ts';
import { setWebhookUrl } from '../services/tenants.ts';
import { fakeUpstream, reportReply, scriptedUpstream, webhookReceiver } from './support/fake-servers.ts';
import { until } from './support/until.ts';
import { isTerminal, ledgerOf, newTenant, type RunStack, startRunStack, type TestTenant, waitForRun } from './support/run-stack.ts';

let stack: RunStack;
let upstream: Awaited<ReturnType<typeof scriptedUpstream>>;
let hook: Awaited<ReturnType<typeof webhookReceiver>>;

beforeAll(async () => {
  upstream = await scriptedUpstream();
  hook = await webhookReceiver();
  stack = await startRunStack({ UPSTREAM_BASE_URL: upstream.url, UPSTREAM_MODEL_MAP: '{"svc-workspace":"scripted-model"}' });
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

async function upstreamTenant(credits = 10_000): Promise<TestTenant> {
  const t = await newTenant(db(), credits);
  await setRoute(db(), t.tenantId, 'svc-workspace', 'upstream');
  await setWebhookUrl(db(), t.name, hook.url, { allowLoopback: true });
  return t;
}

async function startRun(t: TestTenant, input: string) {
  const created = await stack.api.post('/v1/agent-runs', { input }, { key: t.key });
  expect(created.status).toBe(201);
  return created.json.run_id as string;
}

const approve = (t: TestTenant, runId: string, body: object = { decision: 'approve' }, key = `${runId}-${Math.random()}`) =>
  stack.api.post(`/v1/agent-runs/${runId}/approval`, body, { key: t.approverKey, headers: { 'Idempotency-Key': key } });

const send = (id: string, to: string, message: string) => ({ name: 'webhook_delivery', arguments: { to, message }, id });
const awaiting = (round: number) => (r: any) => isTerminal(r) || (r.status === 'awaiting_approval' && (r.approval?.round ?? 1) >= round);

describe('an upstream run by the tool-calling protocol', () => {
  it('offers the whole catalog, runs reads at once, waits for approval of the exact delivery, sends it once and completes verified', async () => {
    const t = await upstreamTenant();
    const input = 'Sum these and tell payroll the result: 12, 30, 8.';
    upstream.load([
      { tool_calls: [{ name: 'calculate', arguments: { expression: '12 + 30 + 8' }, id: 'c1' }] },
      { tool_calls: [send('c2', 'payroll', 'The total is 50.')] },
      reportReply({ quote: input, asks: 'effect', calls: ['c1', 'c2'] }),
    ]);
    const runId = await startRun(t, input);
    const waiting = await waitForRun(stack.api, t.key, runId, awaiting(1));
    expect(waiting.status).toBe('awaiting_approval');
    // The approver sees the exact text and label that will be sent, and their digest.
    expect(waiting.approval.effects).toEqual([
      expect.objectContaining({
        step_id: 'step_1',
        tool: 'webhook_delivery',
        arguments: { to: 'payroll', message: 'The total is 50.' },
        args_digest: expect.stringMatching(/^sha256:/),
      }),
    ]);
    expect(waiting.plan).toMatchObject({
      protocol: 'tool_calls',
      steps: [
        { id: 'call_1', tool: 'calculate', effect: 'read' },
        { id: 'step_1', call_id: 'c2', round: 1 },
      ],
    });
    expect(waiting.result.steps).toEqual([expect.objectContaining({ step_id: 'call_1', tool: 'calculate', status: 'done' })]);
    expect(hook.received).toHaveLength(0);
    expect(waiting.estimate).toMatchObject({
      protocol: 'tool_calls',
      basis: { catalog_tokens: expect.any(Number), tool_results_tokens_max: expect.any(Number) },
    });

    // Every turn carries the whole catalog as OpenAI tools, exactly as GET /v1/tools lists it, and the report's strict schema.
    const first = upstream.seen[0]!.body;
    const listed = (await stack.api.get('/v1/tools', { key: t.key })).json.data as { id: string; description: string; input_schema: unknown }[];
    expect(first.tools!.map((x: any) => [x.function.name, x.function.description, x.function.parameters])).toEqual(
      listed.map((x) => [x.id, x.description, x.input_schema]),
    );
    expect(first.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'run_report', strict: true } });
    expect(first.model).toBe('scripted-model');
    // The calculation went back to the model as the call's result.
    const second = upstream.seen[1]!.body.messages;
    expect(second.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'c1' });
    expect(JSON.parse(second.at(-1).content)).toMatchObject({ status: 'done', output: { value: '50' } });

    expect((await approve(t, runId)).status).toBe(200);
    const run = await waitForRun(stack.api, t.key, runId, isTerminal);
    expect(run.status).toBe('completed');
    expect(hook.received.map((d) => d.body)).toEqual([{ run_id: runId, step_id: 'step_1', to: 'payroll', message: 'The total is 50.' }]);
    expect(run.receipt).toMatchObject({
      verification_class: 'verified',
      unresolved: [],
      actions: [{ n: 1, kind: 'effect', quote: input, outcome: 'performed', by: ['call_1', 'step_1'], checked: true }],
      action_boundary: {
        effects_requested: ['webhook_delivery:step_1'],
        effects_approved: ['webhook_delivery:step_1'],
        effects_performed: ['webhook_delivery:step_1'],
      },
    });
    const calls = await db().select().from(runModelCalls).where(eq(runModelCalls.runId, runId));
    expect(calls.map((c) => c.callKey).sort()).toEqual(['tools:1', 'tools:2', 'tools:3']);
    const { holds, charges } = await ledgerOf(db(), runId);
    expect(charges).toHaveLength(1);
    expect(charges[0]!.amount).toBeLessThanOrEqual(holds[0]!.amount);
  });

  it("takes the README's first run on a capable model: the approval shows the exact label and message, sent once, completed and verified", async () => {
    const t = await upstreamTenant();
    const input = 'Tell the support team that the outage on the billing page is resolved.';
    upstream.load([
      { tool_calls: [send('c1', 'the support team', 'The outage on the billing page is resolved.')] },
      reportReply({ quote: input, asks: 'effect', calls: ['c1'] }),
    ]);
    const runId = await startRun(t, input);
    const waiting = await waitForRun(stack.api, t.key, runId, awaiting(1));
    expect(waiting.approval.effects).toEqual([
      expect.objectContaining({
        step_id: 'step_1',
        tool: 'webhook_delivery',
        arguments: { to: 'the support team', message: 'The outage on the billing page is resolved.' },
      }),
    ]);
    expect((await approve(t, runId, { decision: 'approve', reason: 'checked' })).status).toBe(200);
    const run = await waitForRun(stack.api, t.key, runId, isTerminal);
    expect(run).toMatchObject({
      status: 'completed',
      receipt: { verification_class: 'verified', unresolved: [], action_boundary: { effects_performed: ['webhook_delivery:step_1'] } },
    });
    expect(hook.received).toHaveLength(1);
    expect(hook.received[0]!.headers['webhook-id']).toBe(`${runId}:step_1`);
    expect(hook.received[0]!.body).toEqual({
      run_id: runId,
      step_id: 'step_1',
      to: 'the support team',
      message: 'The outage on the billing page is resolved.',
    });
  });

  it('asks a second approval round for a call proposed after seeing results, each round its own decision', async () => {
    const t = await upstreamTenant();
    const input = 'Tell Dana the invoice was paid. Then tell the finance team that Dana knows.';
    upstream.load([
      { tool_calls: [send('c1', 'Dana', 'The invoice was paid.')] },
      { tool_calls: [send('c2', 'the finance team', 'Dana knows the invoice was paid.')] },
      reportReply(
        { quote: 'Tell Dana the invoice was paid.', asks: 'effect', calls: ['c1'] },
        { quote: 'Then tell the finance team that Dana knows.', asks: 'effect', calls: ['c2'] },
      ),
    ]);
    const runId = await startRun(t, input);
    const one = await waitForRun(stack.api, t.key, runId, awaiting(1));
    expect(one.approval).toMatchObject({ round: 1, state: 'pending', effects: [{ step_id: 'step_1' }] });
    expect((await approve(t, runId)).status).toBe(200);
    const two = await waitForRun(stack.api, t.key, runId, awaiting(2));
    expect(two.status).toBe('awaiting_approval');
    expect(two.approval).toMatchObject({ round: 2, state: 'pending', effects: [{ step_id: 'step_2', arguments: { to: 'the finance team' } }] });
    expect(hook.received).toHaveLength(1); // the first round's delivery, and nothing of the second yet
    expect((await approve(t, runId)).status).toBe(200);
    const run = await waitForRun(stack.api, t.key, runId, isTerminal);
    expect(run.status).toBe('completed');
    expect(hook.received.map((d) => (d.body as { to: string }).to)).toEqual(['Dana', 'the finance team']);
    // executing -> awaiting_approval is a move of its own, in the run's journey.
    const journey = (await stack.api.get('/v1/journey-events?limit=100', { key: t.key })).json.data as { run_id: string; kind: string }[];
    const kinds = journey
      .filter((e) => e.run_id === runId)
      .map((e) => e.kind)
      .reverse();
    expect(kinds.filter((k) => ['run.awaiting_approval', 'run.executing'].includes(k))).toEqual([
      'run.awaiting_approval',
      'run.executing',
      'run.awaiting_approval',
      'run.executing',
    ]);
  });

  it('sends the edited message a person approved, and tells the model it was edited', async () => {
    const t = await upstreamTenant();
    const input = 'Remind the team that the office closes early.';
    upstream.load([
      { tool_calls: [send('c1', 'the team', 'Reminder: the office closes early.')] },
      reportReply({ quote: input, asks: 'effect', calls: ['c1'] }),
    ]);
    const runId = await startRun(t, input);
    await waitForRun(stack.api, t.key, runId, awaiting(1));
    const edits = [{ step_id: 'step_1', arguments: { to: 'the team', message: 'Reminder: the office closes at 3 pm today.' } }];
    expect((await approve(t, runId, { decision: 'approve', edits: [{ step_id: 'step_1', arguments: { message: 'no label' } }] })).status).toBe(400);
    expect((await approve(t, runId, { decision: 'approve', edits })).status).toBe(200);
    const run = await waitForRun(stack.api, t.key, runId, isTerminal);
    expect(run.status).toBe('completed');
    expect(hook.received.map((d) => (d.body as { message: string }).message)).toEqual(['Reminder: the office closes at 3 pm today.']);
    expect(run.approval.effects[0]).toMatchObject({ arguments: edits[0]!.arguments, proposed_digest: expect.stringMatching(/^sha256:/) });
    const told = upstream.seen[1]!.body.messages.find((m: any) => m.role === 'tool' && m.tool_call_id === 'c1');
    expect(JSON.parse(told.content).detail).toContain('edited at approval');
  });

  it('claims no effect the report says it did without an approved call, and sends nothing', async () => {
    const t = await upstreamTenant();
    const input = 'Tell the support team that the outage is over.';
    upstream.load([reportReply({ quote: input, asks: 'effect', answer: 'I told the support team.' })]);
    const run = await waitForRun(stack.api, t.key, await startRun(t, input), isTerminal);
    expect(run.status).toBe('needs_attention');
    expect(run.approval).toBeNull();
    expect(hook.received).toHaveLength(0);
    expect(run.receipt.actions).toEqual([expect.objectContaining({ kind: 'effect', outcome: 'not_performed' })]);
    expect(run.receipt.unresolved[0]).toContain('no approved external call that succeeded did it');
  });

  it('answers a plain question with a short answer, unchecked, and asks nobody to approve anything', async () => {
    const t = await upstreamTenant();
    const input = 'Which two cities are named here: Paris and Lyon?';
    upstream.load([reportReply({ quote: input, answer: 'Paris, Lyon' })]);
    const run = await waitForRun(stack.api, t.key, await startRun(t, input), isTerminal);
    expect(run.status).toBe('completed');
    expect(run.approval).toBeNull();
    expect(run.receipt).toMatchObject({
      verification_class: 'unverified',
      unresolved: [],
      actions: [{ kind: 'information', outcome: 'performed', by: ['answer'], checked: false }],
    });
  });

  it('refuses a call of a tool the catalog does not have or with invalid arguments, tells the model, and runs nothing', async () => {
    const t = await upstreamTenant();
    const input = 'Tell ops that the backup finished.';
    upstream.load([
      {
        tool_calls: [
          { name: 'send_email', arguments: { to: 'ops' }, id: 'c1' },
          { name: 'webhook_delivery', arguments: { message: 'no label' }, id: 'c2' },
        ],
      },
      reportReply({ quote: input, asks: 'effect', calls: ['c1'] }),
    ]);
    const run = await waitForRun(stack.api, t.key, await startRun(t, input), isTerminal);
    expect(run.status).toBe('needs_attention');
    expect(run.approval).toBeNull();
    expect(hook.received).toHaveLength(0);
    const told = upstream.seen[1]!.body.messages.filter((m: any) => m.role === 'tool').map((m: any) => JSON.parse(m.content));
    expect(told).toEqual([
      expect.objectContaining({ status: 'refused', detail: expect.stringContaining("not a tool of this run's catalog") }),
      expect.objectContaining({ status: 'refused', detail: expect.stringContaining('Invalid arguments for webhook_delivery') }),
    ]);
    expect(run.result.steps.map((s: { status: string }) => s.status)).toEqual(['refused', 'refused']);
    expect(run.receipt.unresolved[0]).toContain('which no tool call of this run has');
  });

  it('gives a call an id of its own when the model reuses one, so no call hides another', async () => {
    const t = await upstreamTenant();
    const input = 'Tell the team the build is green.';
    upstream.load([
      { tool_calls: [send('c1', 'the team', 'The build is green.')] },
      {
        tool_calls: [
          { name: 'calculate', arguments: { expression: '1 + 1' }, id: 'c1' },
          { name: 'calculate', arguments: { expression: '1 + 1' }, id: '' },
        ],
      },
      reportReply({ quote: input, asks: 'effect', calls: ['c1'] }),
    ]);
    const runId = await startRun(t, input);
    await waitForRun(stack.api, t.key, runId, awaiting(1));
    expect((await approve(t, runId)).status).toBe(200);
    const run = await waitForRun(stack.api, t.key, runId, isTerminal);
    const ids = run.plan.steps.map((s: { call_id: string }) => s.call_id);
    expect(ids).toEqual(['c1', 'call_t2_1', 'call_t2_2']);
    expect(run.status).toBe('completed');
    expect(run.receipt.actions[0]).toMatchObject({ outcome: 'performed', by: ['step_1'] });
    const results = upstream.seen[2]!.body.messages.filter((m: any) => m.role === 'tool').map((m: any) => m.tool_call_id);
    expect(results).toEqual(['c1', 'call_t2_1', 'call_t2_2']);
  });

  it('retries a model call that failed and charges only the one that answered', async () => {
    const t = await upstreamTenant();
    const input = 'What is 2 + 2?';
    upstream.load([{ status: 500 }, { status: 503 }, reportReply({ quote: input, answer: '4' })]);
    const run = await waitForRun(stack.api, t.key, await startRun(t, input), isTerminal);
    expect(run.status).toBe('completed');
    expect(upstream.seen).toHaveLength(3);
    expect(run.usage.model_calls).toBe(1);
  });

  it('waits as long as a rate-limited model asks (429 Retry-After) and then goes on', async () => {
    const t = await upstreamTenant();
    const input = 'What is 2 + 2?';
    upstream.load([{ status: 429, retryAfter: 2 }, reportReply({ quote: input, answer: '4' })]);
    const run = await waitForRun(stack.api, t.key, await startRun(t, input), isTerminal);
    expect(run.status).toBe('completed');
    expect(upstream.seen[1]!.at - upstream.seen[0]!.at).toBeGreaterThanOrEqual(1_900);
  });

  it('stops needs_attention when reported usage would pass the hold, and never charges more than the hold', async () => {
    const t = await upstreamTenant();
    const input = 'What is 2 + 2?';
    upstream.load([{ ...reportReply({ quote: input, answer: '4' }), usage: { prompt_tokens: 50_000_000, completion_tokens: 10 } }]);
    const run = await waitForRun(stack.api, t.key, await startRun(t, input), isTerminal);
    expect(run.status).toBe('needs_attention');
    expect(run.failure.code).toBe('hold_exhausted');
    const { holds, charges } = await ledgerOf(db(), run.run_id);
    expect(charges.map((c) => c.amount)).toEqual([holds[0]!.amount]);
  });

  it('holds enough for the first call of the whole catalog, and makes no call whose worst case would pass what is left', async () => {
    const t = await upstreamTenant();
    const input = 'What is 2 + 2?';
    const estimate = (await stack.api.post('/v1/usage/estimate', { input }, { key: t.key })).json;
    expect(estimate.protocol).toBe('tool_calls');
    // The first call reports most of the hold spent; the next one's worst case no longer fits.
    upstream.load([
      {
        tool_calls: [{ name: 'calculate', arguments: { expression: '2 + 2' }, id: 'c1' }],
        usage: { prompt_tokens: (estimate.amounts.total - 4) * 500, completion_tokens: 0 },
      },
    ]);
    const run = await waitForRun(stack.api, t.key, await startRun(t, input), isTerminal);
    expect(run.status).toBe('needs_attention');
    expect(run.failure.code).toBe('hold_exhausted');
    expect(run.failure.message).toMatch(/The next model call could cost up to \d+ credits/);
    expect(upstream.seen).toHaveLength(1);
  });

  it('tells a model that proposes external calls past the last approval round that nothing was run', async () => {
    const t = await upstreamTenant();
    const input = 'Tell the team hello four times.';
    upstream.load([
      { tool_calls: [send('c1', 'the team', 'hello')] },
      { tool_calls: [send('c2', 'the team', 'hello')] },
      { tool_calls: [send('c3', 'the team', 'hello')] },
      { tool_calls: [send('c4', 'the team', 'hello')] },
      reportReply({ quote: input, asks: 'effect', calls: ['c1', 'c2', 'c3', 'c4'] }),
    ]);
    const runId = await startRun(t, input);
    for (const round of [1, 2, 3]) {
      await waitForRun(stack.api, t.key, runId, awaiting(round));
      expect((await approve(t, runId)).status).toBe(200);
    }
    const run = await waitForRun(stack.api, t.key, runId, isTerminal);
    expect(hook.received).toHaveLength(3);
    expect(run.status).toBe('needs_attention');
    const told = upstream.seen[4]!.body.messages.find((m: any) => m.role === 'tool' && m.tool_call_id === 'c4');
    expect(JSON.parse(told.content)).toMatchObject({ status: 'refused', detail: expect.stringContaining('approval rounds') });
  });
});

describe('an upstream server that refuses tools and a response format in one request, and caps the tools it takes', () => {
  let capped: RunStack;
  let server: Awaited<ReturnType<typeof fakeUpstream>>;
  let dir: string;
  const replies: object[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'gws-capped-'));
    const file = path.join(dir, 'tools.json');
    const filesystem = path.join(import.meta.dirname, '..', 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js');
    writeFileSync(file, JSON.stringify({ servers: [{ id: 'files', transport: 'stdio', command: process.execPath, args: [filesystem, dir] }] }));
    // As such a server does: a request with both is a 400.
    server = await fakeUpstream((body, _req, res) => {
      if (body.tools?.length && body.response_format) return void res.writeHead(400).end('{"error":{"message":"tools and response_format together"}}');
      const message = replies.shift() ?? { content: 'script ran out' };
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          choices: [{ index: 0, message: { role: 'assistant', content: null, ...message }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 10, completion_tokens: 5 },
        }),
      );
    });
    capped = await startRunStack({
      UPSTREAM_BASE_URL: server.url,
      UPSTREAM_MODEL_MAP: '{"svc-workspace":"capped-model"}',
      UPSTREAM_REPORT_WITH_TOOLS: 'false',
      UPSTREAM_MAX_TOOLS: '8',
      TOOL_SERVERS_FILE: file,
    });
  });
  afterAll(async () => {
    await capped.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('asks for the report in a call of its own, shows at most 8 tools and names the rest', async () => {
    const t = await newTenant(capped.app.database.db, 10_000);
    await setRoute(capped.app.database.db, t.tenantId, 'svc-workspace', 'upstream');
    const input = 'What is 2 + 2?';
    replies.push(
      { tool_calls: [{ id: 'c1', type: 'function', function: { name: 'calculate', arguments: '{"expression":"2 + 2"}' } }] },
      { content: 'It is 4.' },
      { content: JSON.stringify({ parts: [{ quote: input, asks: 'information', status: 'performed', calls: ['c1'], answer: '4', reason: '' }] }) },
    );
    await until(
      async () => (await capped.api.get('/v1/tools', { key: t.key })).json.data.some((x: { id: string }) => x.id.startsWith('files__')),
      'the filesystem tools',
    );
    const created = await capped.api.post('/v1/agent-runs', { input }, { key: t.key });
    const run = await waitForRun(capped.api, t.key, created.json.run_id, isTerminal);
    expect(run.status).toBe('completed');
    const bodies = server.seen.map((s) => s.body);
    expect(bodies.map((b) => [Boolean(b.tools?.length), Boolean(b.response_format)])).toEqual([
      [true, false],
      [true, false],
      [false, true],
    ]);
    expect(bodies[0]!.tools).toHaveLength(8);
    expect(run.plan.not_shown.length).toBeGreaterThan(0);
    expect(run.result.summary).toContain(`not shown ${run.plan.not_shown.length} tool(s)`);
    expect(run.estimate.basis.model_calls_max).toBe(run.estimate.basis.max_turns + 1);
  });
});
