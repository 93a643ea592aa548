// The real-model group: the embedded provider (node-llama-cpp, the model file that
// scripts/ensure-embedded-model.sh installs) answering over HTTP to the official `openai` client,
// and a whole run planned and acted on by it. Then this service's upstream provider against a
// second instance of the service routed to its embedded model (a real OpenAI-compatible server
// backed by a real model), with a recording proxy between them to check what goes over the wire.
// The model is tiny and weak: the tests check the service's part (grammar, usage, billing,
// streaming, queue, honesty of the outcome), never the quality of the answers.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { and, eq } from 'drizzle-orm';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../config/env.ts';
import { ledgerEntries } from '../db/schema.ts';
import { modelCredits } from '../domain/pricing.ts';
import { createKey } from '../services/keys.ts';
import { grantCredits } from '../services/ledger.ts';
import { setRoute } from '../services/routing.ts';
import { setWebhookUrl } from '../services/tenants.ts';
import { ApiClient } from './support/client.ts';
import { webhookReceiver } from './support/fake-servers.ts';
import { isTerminal, ledgerOf, newTenant, type RunStack, startRunStack, waitForRun } from './support/run-stack.ts';
import { startTestApp, type TestApp } from './support/test-app.ts';
import { until } from './support/until.ts';

const config = loadConfig({});
const MODEL = config.models.embedded;
const EMBEDDED = { DEFAULT_PROVIDER: 'embedded' };

let app: TestApp;

beforeAll(async () => {
  if (!MODEL) throw new Error(`The embedded model is missing (${config.models.embeddedAbsent}): run npm run model:install`);
  app = await startTestApp(EMBEDDED);
});
afterAll(() => app?.close());

async function tenant(target: TestApp = app) {
  const db = target.database.db;
  const k = await createKey(db, { tenant: `embedded-${randomBytes(5).toString('hex')}`, kind: 'core' });
  await grantCredits(db, { tenantId: k.tenantId, amount: 1_000_000, entryKey: `g-${k.id}` });
  return { tenantId: k.tenantId, key: k.secret, client: new OpenAI({ apiKey: k.secret, baseURL: `${target.url}/v1`, maxRetries: 0 }) };
}

const chargesOf = (target: TestApp, tenantId: string) =>
  target.database.db
    .select({ amount: ledgerEntries.amount, usageBasis: ledgerEntries.usageBasis })
    .from(ledgerEntries)
    .where(and(eq(ledgerEntries.tenantId, tenantId), eq(ledgerEntries.kind, 'charge')));

/** A strict json_schema response format whose fields are all required strings. */
const stringFields = (name: string, ...fields: string[]) => ({
  type: 'json_schema' as const,
  json_schema: {
    name,
    strict: true,
    schema: { type: 'object', properties: Object.fromEntries(fields.map((f) => [f, { type: 'string' }])), required: fields, additionalProperties: false },
  },
});

describe('chat on the embedded model', () => {
  it('is listed by GET /v1/providers as the default, with its model', async () => {
    const t = await tenant();
    const api = await ApiClient.connect(app.url);
    const providers = (await api.get('/v1/providers', { key: t.key })).json.data as { id: string }[];
    expect(existsSync(MODEL!.modelPath)).toBe(true);
    expect(providers.find((p) => p.id === 'embedded')).toMatchObject({ status: 'available', default: true, model: MODEL!.name });
  });

  it('answers unstreamed with real text, and charges the token counts of the model', { timeout: 60_000 }, async () => {
    const t = await tenant();
    const completion = await t.client.chat.completions.create({
      model: 'svc-workspace',
      messages: [{ role: 'user', content: 'What is the capital of France?' }],
      max_tokens: 48,
      temperature: 0,
    });
    const text = completion.choices[0]!.message.content ?? '';
    expect(text.trim().length).toBeGreaterThan(0);
    const usage = completion.usage!;
    expect(usage.prompt_tokens).toBeGreaterThan(5);
    expect(usage.completion_tokens).toBeGreaterThan(0);
    expect(usage.completion_tokens).toBeLessThanOrEqual(48);
    const charges = await chargesOf(app, t.tenantId);
    expect(charges).toEqual([{ amount: modelCredits(usage.prompt_tokens + usage.completion_tokens, 'svc-workspace', config.pricing), usageBasis: 'reported' }]);
  });

  it('streams token by token, with the usage chunk when asked', { timeout: 60_000 }, async () => {
    const t = await tenant();
    const stream = await t.client.chat.completions.create({
      model: 'svc-workspace',
      messages: [{ role: 'user', content: 'Write one sentence about the sea.' }],
      max_tokens: 40,
      stream: true,
      stream_options: { include_usage: true },
    });
    const pieces: string[] = [];
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      const piece = chunk.choices[0]?.delta?.content;
      if (piece) pieces.push(piece);
      if (chunk.usage) usage = chunk.usage;
    }
    expect(pieces.length).toBeGreaterThan(3);
    expect(usage!.completion_tokens).toBeGreaterThan(0);
    expect((await chargesOf(app, t.tenantId))[0]).toMatchObject({ usageBasis: 'reported' });
  });

  it('answers a json_schema request with JSON that parses and fits the schema (grammar-constrained)', { timeout: 60_000 }, async () => {
    const t = await tenant();
    const completion = await t.client.chat.completions.create({
      model: 'svc-workspace',
      // The text states both values: an answer is held to it (the next tests).
      messages: [{ role: 'user', content: 'Paris is a city in France. Name the city and its country.' }],
      max_tokens: 80,
      response_format: stringFields('place', 'city', 'country'),
    });
    const parsed = JSON.parse(completion.choices[0]!.message.content!);
    expect(Object.keys(parsed).sort()).toEqual(['city', 'country']);
    expect(typeof parsed.city).toBe('string');
  });

  const ask = (t: { client: OpenAI }, content: string, format: ReturnType<typeof stringFields>) =>
    t.client.chat.completions.parse({ model: 'svc-workspace', messages: [{ role: 'user', content }], max_tokens: 40, temperature: 0, response_format: format });

  it('refuses, naming the field, a json_schema request whose required value the text does not state: the model’s made-up value is not passed on', {
    timeout: 60_000,
  }, async () => {
    const t = await tenant();
    // The grammar makes the model write some color (it writes "blue"); the text names none.
    const completion = await ask(t, 'Name a color.', stringFields('color', 'color'));
    expect(completion.choices[0]).toMatchObject({
      finish_reason: 'stop',
      message: {
        content: null,
        parsed: null,
        refusal: 'The provided text holds no value for the required field(s): color. Nothing was guessed; add the information and ask again.',
      },
    });
    // The model ran: its tokens are billed as it counted them.
    expect(completion.usage!.completion_tokens).toBeGreaterThan(0);
    expect((await chargesOf(app, t.tenantId))[0]).toMatchObject({ usageBasis: 'reported' });
  });

  it('answers a json_schema request with the value the text states', { timeout: 60_000 }, async () => {
    const t = await tenant();
    const completion = await ask(t, 'The office is in Lisbon. Which city is the office in?', stringFields('place', 'city'));
    const message = completion.choices[0]!.message;
    expect(message.refusal).toBeNull();
    expect(JSON.parse(message.content!).city).toMatch(/^lisbon$/i);
  });

  it('answers json_object with a JSON object (the grammar allows no other JSON value)', { timeout: 90_000 }, async () => {
    const t = await tenant();
    // Under node-llama-cpp's any-JSON grammar these two ran on past 120 tokens (nested keys without end); under the object grammar they close.
    for (const content of ['What is 2 plus 3?', 'List three colors.']) {
      const completion = await t.client.chat.completions.create({
        model: 'svc-workspace',
        messages: [{ role: 'user', content }],
        max_tokens: 120,
        temperature: 0,
        response_format: { type: 'json_object' },
      });
      const choice = completion.choices[0]!;
      expect(choice.message.refusal).toBeNull();
      const answer = JSON.parse(choice.message.content!);
      expect(typeof answer === 'object' && answer !== null && !Array.isArray(answer)).toBe(true);
    }
  });

  it('answers plain questions in JSON mode with an object, at the default max_tokens, billed by the model’s own token counts', {
    timeout: 120_000,
  }, async () => {
    const t = await tenant();
    // No max_tokens, as a user sends them. The model used to run on inside the object (one colour or
    // one sentence over and over) until the budget cut it off, a refusal, or to answer an empty {}.
    const questions = [
      'Give the three primary colours as JSON.',
      'Answer in JSON: what is 2 + 2?',
      'How many legs does a spider have?',
      'Who wrote Romeo and Juliet?',
    ];
    const used: number[] = [];
    for (const content of questions) {
      const completion = await t.client.chat.completions.create({
        model: 'svc-workspace',
        messages: [{ role: 'user', content }],
        response_format: { type: 'json_object' },
      });
      const choice = completion.choices[0]!;
      expect(choice.message.refusal, content).toBeNull();
      expect(choice.finish_reason, content).toBe('stop');
      const answer = JSON.parse(choice.message.content!);
      expect(typeof answer === 'object' && answer !== null && !Array.isArray(answer), choice.message.content!).toBe(true);
      expect(Object.keys(answer).length, choice.message.content!).toBeGreaterThan(0);
      const usage = completion.usage!;
      expect(usage.completion_tokens).toBeLessThanOrEqual(config.chat.maxTokensDefault);
      used.push(modelCredits(usage.prompt_tokens + usage.completion_tokens, 'svc-workspace', config.pricing));
    }
    const charges = await chargesOf(app, t.tenantId);
    expect(charges.map((c) => c.amount).sort((a, b) => a - b)).toEqual(used.sort((a, b) => a - b));
    expect(charges.every((c) => c.usageBasis === 'reported')).toBe(true);
  });

  it('refuses JSON mode only when no object fits in max_tokens, and bills what the model used', { timeout: 60_000 }, async () => {
    const t = await tenant();
    const completion = await t.client.chat.completions.create({
      model: 'svc-workspace',
      messages: [{ role: 'user', content: 'Give the three primary colours as JSON.' }],
      max_tokens: 4,
      response_format: { type: 'json_object' },
    });
    expect(completion.choices[0]).toMatchObject({
      finish_reason: 'stop',
      message: { content: null, refusal: 'I could not produce an answer that is a JSON object.' },
    });
    // Both tries together stay within max_tokens.
    expect(completion.usage!.completion_tokens).toBeGreaterThan(0);
    expect(completion.usage!.completion_tokens).toBeLessThanOrEqual(4);
    expect((await chargesOf(app, t.tenantId))[0]).toMatchObject({ usageBasis: 'reported' });
  });

  it('calls a tool when tool_choice requires it, with arguments that fit its schema', { timeout: 60_000 }, async () => {
    const t = await tenant();
    const completion = await t.client.chat.completions.create({
      model: 'svc-workspace',
      messages: [{ role: 'user', content: 'What is 2 plus 3?' }],
      max_tokens: 120,
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_sum',
            description: 'Adds two numbers.',
            parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
          },
        },
      ],
      tool_choice: 'required',
      parallel_tool_calls: false,
    });
    const choice = completion.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.tool_calls).toHaveLength(1);
    const call = choice.message.tool_calls![0]!;
    expect(call.type === 'function' && call.function.name).toBe('get_sum');
    const args = JSON.parse(call.type === 'function' ? call.function.arguments : '{}');
    expect(typeof args.a).toBe('number');
    expect(typeof args.b).toBe('number');
  });
});

describe('routing per tenant', () => {
  it('sends a tenant routed to local to the model-free provider, and refuses a route to a provider that is not configured', { timeout: 60_000 }, async () => {
    const t = await tenant();
    const api = await ApiClient.connect(app.url);
    const routed = await api.post('/v1/routing-policies', { model: 'svc-workspace', provider: 'local' }, { key: t.key });
    expect(routed.status).toBe(201);
    const answer = await t.client.chat.completions.create({ model: 'svc-workspace', messages: [{ role: 'user', content: 'Plan the offsite agenda.' }] });
    expect(answer.choices[0]!.message.content).toContain('You asked about'); // the local provider's deterministic answer
    expect((await chargesOf(app, t.tenantId))[0]).toMatchObject({ usageBasis: 'estimated' });
    // Back to the model, by name.
    expect((await api.post('/v1/routing-policies', { model: 'svc-workspace', provider: 'embedded' }, { key: t.key })).status).toBe(201);
    const modelAnswer = await t.client.chat.completions.create({ model: 'svc-workspace', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 8 });
    expect(modelAnswer.choices[0]!.message.content).not.toContain('You asked about');
    // A deployment without the model refuses the route before writing it.
    const none = await startTestApp({ EMBEDDED_MODEL_PATH: 'off' });
    try {
      const other = await tenant(none);
      const refused = await (await ApiClient.connect(none.url)).post(
        '/v1/routing-policies',
        { model: 'svc-workspace', provider: 'embedded' },
        { key: other.key },
      );
      expect(refused.status).toBe(400);
      expect(refused.json.error.code).toBe('provider_not_configured');
    } finally {
      await none.close();
    }
  });
});

/** A streamed chat whose moments (first token, end) are logged as `${name}:first` and `${name}:done`, in the order they come. */
function streamedChat(
  t: { client: OpenAI },
  name: string,
  content: string,
  log: string[],
  { signal, maxTokens = 48 }: { signal?: AbortSignal; maxTokens?: number } = {},
) {
  let first: () => void = () => {};
  let failed: (err: unknown) => void = () => {};
  const firstToken = new Promise<void>((resolve, reject) => {
    first = resolve;
    failed = reject;
  });
  const done = (async () => {
    let text = '';
    try {
      const stream = await t.client.chat.completions.create(
        { model: 'svc-workspace', messages: [{ role: 'user', content }], max_tokens: maxTokens, temperature: 0, stream: true },
        { signal },
      );
      for await (const chunk of stream) {
        const piece = chunk.choices[0]?.delta?.content;
        if (!piece) continue;
        if (!text) {
          log.push(`${name}:first`);
          first();
        }
        text += piece;
      }
    } catch (err) {
      failed(err);
      throw err;
    }
    if (!text) failed(new Error(`${name}: no text`));
    log.push(`${name}:done`);
    return text;
  })();
  // Awaited by the tests that need them; a test that fails first (or closes the server) leaves them unheard.
  firstToken.catch(() => {});
  done.catch(() => {});
  return { firstToken, done };
}

/** The embedded provider's occupancy as GET /v1/providers reports it. */
async function occupancy(api: ApiClient, key: string): Promise<{ in_use: number; queued: number }> {
  const res = await api.get('/v1/providers', { key });
  expect(res.status, res.text).toBe(200);
  const providers = res.json.data as { id: string; load: { in_use: number; queued: number } }[];
  return providers.find((p) => p.id === 'embedded')!.load;
}

describe('the embedded model under load', () => {
  it('refuses with 429 and Retry-After when its queue is full, and goes on serving', { timeout: 60_000 }, async () => {
    // Two answered at once and no room to wait: the third finds none.
    const busy = await startTestApp({ ...EMBEDDED, EMBEDDED_PARALLEL: '2', EMBEDDED_QUEUE_MAX: '0' });
    try {
      const t = await tenant(busy);
      const api = await ApiClient.connect(busy.url);
      const ask = (content: string) =>
        api.post('/v1/chat/completions', { model: 'svc-workspace', messages: [{ role: 'user', content }], max_tokens: 32 }, { key: t.key });
      const log: string[] = [];
      const stop = new AbortController();
      const first = streamedChat(t, 'a', 'Write a very long story about a ship.', log, { signal: stop.signal, maxTokens: 1000 });
      const second = streamedChat(t, 'b', 'Write a very long story about a dragon.', log, { signal: stop.signal, maxTokens: 1000 });
      await Promise.all([first.firstToken, second.firstToken]);
      const third = await ask('And mountains?');
      expect(third.status).toBe(429);
      expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(third.json.error.code).toBeDefined();
      stop.abort();
      await Promise.allSettled([first.done, second.done]);
      // Once the abandoned generations have stopped, there is room again.
      await until(async () => (await ask('And lakes?')).status === 200, 'the model to be free again', { withinMs: 10_000 });
    } finally {
      await busy.close();
    }
  });

  it('stops generating when the client goes away, so the next request is served at once', { timeout: 60_000 }, async () => {
    // One at a time and no room to queue: only a stopped generation frees the model.
    const busy = await startTestApp({ ...EMBEDDED, EMBEDDED_PARALLEL: '1', EMBEDDED_QUEUE_MAX: '0' });
    try {
      const t = await tenant(busy);
      // A long answer (2,000 tokens would take about half a minute), abandoned after its first token.
      const abort = new AbortController();
      const res = await fetch(`${busy.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'svc-workspace',
          messages: [{ role: 'user', content: 'Write a very long story about a ship.' }],
          max_tokens: 2000,
          stream: true,
        }),
        signal: abort.signal,
      });
      const reader = res.body!.getReader();
      let seen = '';
      while (!seen.includes('"content"')) seen += new TextDecoder().decode((await reader.read()).value);
      abort.abort();
      // With no room to queue, a request gets 200 only once the abandoned generation has stopped.
      const api = await ApiClient.connect(busy.url);
      await until(
        async () =>
          (await api.post('/v1/chat/completions', { model: 'svc-workspace', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 4 }, { key: t.key }))
            .status === 200,
        'the model to be free again',
        { withinMs: 10_000 },
      );
    } finally {
      await busy.close();
    }
  });
});

describe('more than one caller on the embedded model (EMBEDDED_PARALLEL=2)', () => {
  let two: TestApp;
  beforeAll(async () => {
    two = await startTestApp({ ...EMBEDDED, EMBEDDED_PARALLEL: '2' });
  });
  afterAll(() => two?.close());

  it('answers two streamed chats at once: both have their first token before either ends', { timeout: 90_000 }, async () => {
    const t = await tenant(two);
    const log: string[] = [];
    const a = streamedChat(t, 'a', 'Write a very long story about a ship.', log);
    const b = streamedChat(t, 'b', 'Write a very long story about a dragon.', log);
    const [textA, textB] = await Promise.all([a.done, b.done]);
    expect(textA.length).toBeGreaterThan(0);
    expect(textB.length).toBeGreaterThan(0);
    // One at a time would log a:first, a:done, b:first, b:done.
    const firstEnd = Math.min(log.indexOf('a:done'), log.indexOf('b:done'));
    expect(log.indexOf('a:first'), log.join(' ')).toBeLessThan(firstEnd);
    expect(log.indexOf('b:first'), log.join(' ')).toBeLessThan(firstEnd);
  });

  it('gives each of two requests answered together the answer it gets alone, counting its whole prompt: nothing of the other is seen', {
    timeout: 90_000,
  }, async () => {
    const t = await tenant(two);
    const ask = async (content: string) => {
      const c = await t.client.chat.completions.create({ model: 'svc-workspace', messages: [{ role: 'user', content }], max_tokens: 24, temperature: 0 });
      return { text: c.choices[0]!.message.content, prompt: c.usage!.prompt_tokens, completion: c.usage!.completion_tokens };
    };
    const questions = ['What is the capital of France?', 'What is the capital of Italy?'];
    // Alone, one after the other: the second is answered on the context the first used.
    const alone = [await ask(questions[0]!), await ask(questions[1]!)];
    // Together: one of them on that same context, after the other's conversation.
    const together = await Promise.all(questions.map(ask));
    expect(together).toEqual(alone);
  });

  it('shares the model between a run and a chat: the run’s model call is answered while a chat streams', { timeout: 240_000 }, async () => {
    const stack = await startRunStack({ ...EMBEDDED, EMBEDDED_PARALLEL: '2' });
    try {
      const chatter = await tenant(stack.app);
      const runner = await newTenant(stack.app.database.db, 100_000);
      const log: string[] = [];
      const stop = new AbortController();
      // A long answer, so the run's calls come while it streams.
      const chat = streamedChat(chatter, 'chat', 'Write a very long story about a ship.', log, { signal: stop.signal, maxTokens: 2000 });
      await chat.firstToken;
      const created = await stack.api.post('/v1/agent-runs', { input: 'Tell the team channel that the release notes are out.' }, { key: runner.key });
      expect(created.status).toBe(201);
      // The worker and the API of this process share one model: a run's call and the chat are answered together.
      await until(async () => (await occupancy(stack.api, runner.key)).in_use === 2, 'a run’s model call beside the chat', {
        withinMs: 60_000,
        everyMs: 200,
      });
      expect(log).not.toContain('chat:done');
      stop.abort();
      await chat.done.catch(() => {});
      const runId = created.json.run_id as string;
      let run = await waitForRun(stack.api, runner.key, runId, (r) => r.status === 'awaiting_approval' || isTerminal(r), 180_000);
      if (run.status === 'awaiting_approval') {
        expect((await stack.api.post(`/v1/agent-runs/${runId}/approval`, { decision: 'reject' }, { key: runner.approverKey })).status).toBe(200);
        run = await waitForRun(stack.api, runner.key, runId, isTerminal, 60_000);
      }
      // Planned by the model, as a run alone is (a rejected run reports no usage; its plan says who made it).
      expect(run.estimate).toMatchObject({ provider: 'embedded' });
      expect(run.plan).toMatchObject({ planner: 'model' });
    } finally {
      await stack.close();
    }
  });
});

describe('an embedded model file that does not load', () => {
  it('answers 502 upstream_unavailable, with nothing of the engine’s error, and holds nothing', { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gws-bad-model-'));
    const bad = path.join(dir, 'broken.gguf');
    writeFileSync(bad, 'not a model');
    const broken = await startTestApp({ ...EMBEDDED, EMBEDDED_MODEL_PATH: bad });
    try {
      const t = await tenant(broken);
      const answer = await (await ApiClient.connect(broken.url)).post(
        '/v1/chat/completions',
        { model: 'svc-workspace', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 8 },
        { key: t.key },
      );
      expect(answer.status).toBe(502);
      expect(answer.json.error.code).toBe('upstream_unavailable');
      expect(answer.text).not.toContain('broken.gguf');
      const usage = await (await ApiClient.connect(broken.url)).get('/v1/usage', { key: t.key });
      expect(usage.json.held).toBe(0);
      expect(await chargesOf(broken, t.tenantId)).toEqual([]);
    } finally {
      await broken.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a run on the embedded model', () => {
  let stack: RunStack;
  beforeAll(async () => {
    stack = await startRunStack(EMBEDDED);
  });
  afterAll(() => stack?.close());

  it('is planned by the model, settles the tokens it used, and ends in an honest state', { timeout: 240_000 }, async () => {
    const db = stack.app.database.db;
    const hook = await webhookReceiver();
    try {
      const t = await newTenant(db, 100_000);
      await setWebhookUrl(db, t.name, hook.url, { allowLoopback: true });
      const created = await stack.api.post('/v1/agent-runs', { input: 'Tell the team channel that the release notes are out.' }, { key: t.key });
      expect(created.status).toBe(201);
      const runId = created.json.run_id as string;
      let run = await waitForRun(stack.api, t.key, runId, (r) => r.status === 'awaiting_approval' || isTerminal(r), 180_000);
      if (run.status === 'awaiting_approval') {
        expect((await stack.api.post(`/v1/agent-runs/${runId}/approval`, { decision: 'approve' }, { key: t.approverKey })).status).toBe(200);
        run = await waitForRun(stack.api, t.key, runId, isTerminal, 180_000);
      }
      expect(run.estimate).toMatchObject({ provider: 'embedded', served_model: MODEL!.name });
      // Planned by the model: its calls were made and billed by the model's own token counts.
      expect(run.usage.model_calls).toBeGreaterThanOrEqual(1);
      expect(run.usage.usage_basis).toBe('reported');
      expect(run.usage.input_tokens).toBeGreaterThan(0);
      const { holds, charges } = await ledgerOf(db, runId);
      expect(holds[0]!.status).toBe('settled');
      expect(charges[0]!.amount).toBe(run.usage.charged);
      // Honest: completed only when every requested action was performed and checked. A plan that
      // covers nothing ends the run before any step (no receipt), needs_attention, saying so.
      if (run.status === 'completed') expect((run.receipt.actions as { outcome: string }[]).every((a) => a.outcome === 'performed')).toBe(true);
      else expect(run.status).toBe('needs_attention');
      if (run.receipt === null) expect(run.failure.code).toMatch(/^plan_/);
      // A delivery is claimed only if the receiver got it.
      const performed = (run.receipt?.action_boundary.effects_performed ?? []) as string[];
      if (performed.some((e) => e.startsWith('webhook_delivery'))) expect(hook.received).toHaveLength(1);
      else expect(hook.received).toHaveLength(0);
    } finally {
      await hook.close();
    }
  });
});

describe('what a run on the default (embedded) model sends', () => {
  let stack: RunStack;
  beforeAll(async () => {
    stack = await startRunStack(EMBEDDED);
  });
  afterAll(() => stack?.close());

  /** A tenant with a webhook, a run of `input` at its approval, and the receiver. */
  async function awaitingRun(input: string) {
    const db = stack.app.database.db;
    const hook = await webhookReceiver();
    const t = await newTenant(db, 100_000);
    await setWebhookUrl(db, t.name, hook.url, { allowLoopback: true });
    const created = await stack.api.post('/v1/agent-runs', { input }, { key: t.key });
    expect(created.status).toBe(201);
    const runId = created.json.run_id as string;
    const run = await waitForRun(stack.api, t.key, runId, (r) => r.status === 'awaiting_approval' || isTerminal(r), 180_000);
    return { t, hook, runId, run };
  }

  it('shows the approver the message the request gives, and delivers exactly that message', { timeout: 300_000 }, async () => {
    const { t, hook, runId, run } = await awaitingRun('Tell the support team that the outage on the billing page is resolved.');
    try {
      expect(run.status).toBe('awaiting_approval');
      const effect = run.approval.effects[0];
      // The embedded adapter writes the protocol's call: the audience the request names, and its message.
      expect(effect).toMatchObject({ tool: 'webhook_delivery', arguments: { to: 'the support team', message: 'the outage on the billing page is resolved' } });
      expect(effect.args_digest).toMatch(/^sha256:/);
      expect((await stack.api.post(`/v1/agent-runs/${runId}/approval`, { decision: 'approve' }, { key: t.approverKey })).status).toBe(200);
      const done = await waitForRun(stack.api, t.key, runId, isTerminal, 180_000);
      expect(done.status).toBe('completed');
      expect(hook.received).toHaveLength(1);
      expect(hook.received[0]!.body).toEqual({
        run_id: runId,
        step_id: effect.step_id,
        to: 'the support team',
        message: 'the outage on the billing page is resolved',
      });
      expect(done.receipt.verification_class).toBe('verified');
    } finally {
      await hook.close();
    }
  });

  it('writes the result a delivery sends before the approval, shows it, and sends exactly that', { timeout: 300_000 }, async () => {
    const input = 'Summarise these notes and post the summary to the team channel: the audit passed, two minor findings remain open.';
    const { t, hook, runId, run } = await awaitingRun(input);
    try {
      expect(run.status).toBe('awaiting_approval');
      const effect = run.approval.effects[0];
      // The summary is written before the approval: the call carries it, and the approver sees that very text.
      expect(effect).toMatchObject({ tool: 'webhook_delivery', arguments: { to: 'the team channel' } });
      expect(typeof effect.arguments.message).toBe('string');
      expect(effect.arguments.message.length).toBeGreaterThan(0);
      expect(run.plan.steps.filter((s: { effect: string }) => s.effect === 'external')).toHaveLength(1);
      expect(hook.received).toHaveLength(0);
      expect((await stack.api.post(`/v1/agent-runs/${runId}/approval`, { decision: 'approve' }, { key: t.approverKey })).status).toBe(200);
      await waitForRun(stack.api, t.key, runId, isTerminal, 180_000);
      expect(hook.received.map((r) => (r.body as { message: string }).message)).toEqual([effect.arguments.message]);
    } finally {
      await hook.close();
    }
  });

  it('takes a statement as the context of the part after it, works out the total it names with calculate, and sends exactly that', {
    timeout: 300_000,
  }, async () => {
    const input =
      'Three invoices came in today: €240.00 from Brightline, €115.50 from Kettle & Co. and €89.99 from Oduya Print. Add them up and post the total to the team channel.';
    const { t, hook, runId, run } = await awaitingRun(input);
    try {
      expect(run.status).toBe('awaiting_approval');
      const [effect] = run.approval.effects;
      // The total is worked out exactly before the approval, and the approver sees the very text that is sent.
      expect(effect.tool).toBe('webhook_delivery');
      expect(effect.arguments.message).toContain('445.49');
      expect(run.plan.steps.map((s: { tool: string }) => s.tool)).toContain('calculate');
      expect((await stack.api.post(`/v1/agent-runs/${runId}/approval`, { decision: 'approve' }, { key: t.approverKey })).status).toBe(200);
      const done = await waitForRun(stack.api, t.key, runId, isTerminal, 180_000);
      // The statement is no part of its own left unresolved: the run completes, every sentence quoted.
      expect(done.status).toBe('completed');
      expect(hook.received.map((r) => (r.body as { message: string }).message)).toEqual([effect.arguments.message]);
    } finally {
      await hook.close();
    }
  });

  it('delivers an edited message, and the receipt keeps both digests', { timeout: 300_000 }, async () => {
    const { t, hook, runId, run } = await awaitingRun('Notify the team channel that the deploy finished.');
    try {
      expect(run.status).toBe('awaiting_approval');
      const effect = run.approval.effects[0];
      const edited = { to: 'the team channel', message: 'The deploy finished at 14:05; no action needed.' };
      const decided = await stack.api.post(
        `/v1/agent-runs/${runId}/approval`,
        { decision: 'approve', edits: [{ step_id: effect.step_id, arguments: edited }] },
        { key: t.approverKey },
      );
      expect(decided.status).toBe(200);
      const done = await waitForRun(stack.api, t.key, runId, isTerminal, 180_000);
      expect(done.status).toBe('completed');
      expect(hook.received.map((r) => (r.body as { message: string }).message)).toEqual([edited.message]);
      expect(done.receipt.digests[`proposed_args:${effect.step_id}`]).toBe(effect.args_digest);
      expect(done.receipt.digests[`args:${effect.step_id}`]).not.toBe(effect.args_digest);
    } finally {
      await hook.close();
    }
  });

  it.each([
    ['Send the release notes to the team channel.', 'the release notes'],
    ['Summarise our Q3 vendor contracts.', 'our Q3 vendor contracts'],
  ])('does not act on material it was never given: %s', { timeout: 300_000 }, async (input, named) => {
    const { hook, run } = await awaitingRun(input);
    try {
      expect(run.status).toBe('needs_attention');
      // Planned, with the part unresolved, naming what is missing (not a plan that failed its checks).
      expect(run.failure.code).toBe('unresolved_remainder');
      expect(run.plan.steps).toEqual([]);
      expect(run.receipt.unresolved.join(' ')).toContain(`"${named}", which the run was not given`);
      expect(hook.received).toHaveLength(0);
      expect(run.receipt.action_boundary.effects_performed).toEqual([]);
      expect(run.receipt.actions.every((a: { outcome: string }) => a.outcome !== 'performed')).toBe(true);
      expect(run.receipt.unresolved.join(' ')).toContain(named);
    } finally {
      await hook.close();
    }
  });
});

/** A proxy that records each request body on its way to `target`. */
async function recordingProxy(target: string) {
  const seen: Record<string, unknown>[] = [];
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    seen.push(JSON.parse(body.toString('utf8') || '{}'));
    const upstream = await fetch(`${target}${req.url}`, {
      method: req.method,
      headers: { 'content-type': 'application/json', authorization: String(req.headers.authorization ?? '') },
      body,
    });
    res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' });
    for await (const c of upstream.body ?? []) res.write(c);
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    seen,
    close: () => new Promise((r) => server.close(r)),
  };
}

describe('the upstream provider against a real OpenAI-compatible server (this service on its embedded model)', () => {
  let front: TestApp;
  let proxy: Awaited<ReturnType<typeof recordingProxy>>;
  let backKey: string;

  beforeAll(async () => {
    const back = await tenant(app);
    backKey = back.key;
    proxy = await recordingProxy(`${app.url}`);
    process.env.GWS_TEST_BACK_KEY = backKey;
    front = await startTestApp({
      UPSTREAM_BASE_URL: proxy.url,
      UPSTREAM_API_KEY_ENV: 'GWS_TEST_BACK_KEY',
      UPSTREAM_MODEL_MAP: '{"svc-workspace":"svc-workspace"}',
      EMBEDDED_MODEL_PATH: 'off',
    });
  });
  afterAll(async () => {
    await front?.close();
    await proxy?.close();
  });

  async function frontTenant() {
    const t = await tenant(front);
    await setRoute(front.database.db, t.tenantId, 'svc-workspace', 'upstream');
    return t;
  }

  it('streams with stream_options.include_usage, sends the sampling fields, and bills the usage the server reported', { timeout: 60_000 }, async () => {
    const t = await frontTenant();
    const stream = await t.client.chat.completions.create({
      model: 'svc-workspace',
      messages: [{ role: 'user', content: 'Say something about trees.' }],
      max_tokens: 32,
      temperature: 0.2,
      top_p: 0.9,
      seed: 7,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text.length).toBeGreaterThan(0);
    const sent = proxy.seen.at(-1)!;
    expect(sent).toMatchObject({ stream: true, stream_options: { include_usage: true }, temperature: 0.2, top_p: 0.9, seed: 7, max_tokens: 32 });
    expect(usage!.completion_tokens).toBeGreaterThan(0);
    expect(await chargesOf(front, t.tenantId)).toEqual([{ amount: expect.any(Number), usageBasis: 'reported' }]);
  });

  it('sends tools with tool_choice, and the tool call comes back whole', { timeout: 60_000 }, async () => {
    const t = await frontTenant();
    const completion = await t.client.chat.completions.create({
      model: 'svc-workspace',
      messages: [{ role: 'user', content: 'What is 4 plus 5?' }],
      max_tokens: 120,
      tools: [
        {
          type: 'function',
          function: { name: 'get_sum', parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] } },
        },
      ],
      tool_choice: { type: 'function', function: { name: 'get_sum' } },
    });
    expect(proxy.seen.at(-1)).toMatchObject({ tool_choice: { type: 'function', function: { name: 'get_sum' } }, tools: [{ type: 'function' }] });
    const call = completion.choices[0]!.message.tool_calls![0]!;
    expect(call.type === 'function' && call.function.name).toBe('get_sum');
  });

  it('sends a json_schema response_format in OpenAI’s form, and the answer parses', { timeout: 60_000 }, async () => {
    const t = await frontTenant();
    const format = stringFields('color', 'color');
    const schema = format.json_schema.schema;
    const completion = await t.client.chat.completions.create({
      model: 'svc-workspace',
      // Stated in the text: both this service and the one behind it hold the answer to it.
      messages: [{ role: 'user', content: 'The car is red. What color is the car?' }],
      max_tokens: 40,
      response_format: format,
    });
    expect(proxy.seen.at(-1)).toMatchObject({ response_format: { type: 'json_schema', json_schema: { name: 'color', schema } } });
    expect(typeof JSON.parse(completion.choices[0]!.message.content!).color).toBe('string');
  });
});

describe('idle unload', () => {
  it('unloads the model after EMBEDDED_IDLE_UNLOAD_SECONDS, and loads it again on the next request', { timeout: 60_000 }, async () => {
    // Other settings make another model of this process (one per configuration), with its own idle time.
    const idle = await startTestApp({ ...EMBEDDED, EMBEDDED_IDLE_UNLOAD_SECONDS: '1' });
    try {
      const t = await tenant(idle);
      const api = await ApiClient.connect(idle.url);
      const state = async () =>
        ((await api.get('/v1/providers', { key: t.key })).json.data as { id: string; state: string }[]).find((p) => p.id === 'embedded')!.state;
      const ask = () =>
        api.post('/v1/chat/completions', { model: 'svc-workspace', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 8 }, { key: t.key });
      expect((await ask()).status).toBe(200);
      await until(async () => (await state()) === 'unloaded', 'the model to be unloaded', { withinMs: 10_000 });
      expect((await ask()).status).toBe(200);
      expect(await state()).toBe('loaded');
    } finally {
      await idle.close();
    }
  });
});
