// What a chat is billed, against a local OpenAI-compatible upstream that
// records what the service sends (tests/support/fake-servers.ts), through the
// official `openai` client: a streamed call asks for usage and is charged what
// the upstream reports, the same as unstreamed; a structured-output refusal
// keeps the reported usage; the estimate is used only when the upstream reports
// nothing, and the charge says so. OpenAI's sampling parameters are forwarded
// as sent, out-of-bounds values are 400 naming the parameter, and n > 1 is 400.
import { randomBytes } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../config/env.ts';
import { ledgerEntries } from '../db/schema.ts';
import { modelCredits } from '../domain/pricing.ts';
import { createKey } from '../services/keys.ts';
import { grantCredits } from '../services/ledger.ts';
import { setRoute } from '../services/routing.ts';
import { scriptedUpstream } from './support/fake-servers.ts';
import { startTestApp, type TestApp } from './support/test-app.ts';

let app: TestApp;
let upstream: Awaited<ReturnType<typeof scriptedUpstream>>;
const pricing = loadConfig({}).pricing;

beforeAll(async () => {
  upstream = await scriptedUpstream();
  app = await startTestApp({ UPSTREAM_BASE_URL: upstream.url, UPSTREAM_MODEL_MAP: '{"svc-workspace":"tiny-model"}' });
});
afterAll(async () => {
  await app.close();
  await upstream.close();
});

async function tenant() {
  const db = app.database.db;
  const k = await createKey(db, { tenant: `billing-${randomBytes(5).toString('hex')}`, kind: 'core' });
  await grantCredits(db, { tenantId: k.tenantId, amount: 1_000_000, entryKey: `g-${k.id}` });
  await setRoute(db, k.tenantId, 'svc-workspace', 'upstream');
  return { tenantId: k.tenantId, key: k.secret, client: new OpenAI({ apiKey: k.secret, baseURL: `${app.url}/v1`, maxRetries: 0 }) };
}

const chargesOf = (tenantId: string) =>
  app.database.db
    .select({ amount: ledgerEntries.amount, usageBasis: ledgerEntries.usageBasis })
    .from(ledgerEntries)
    .where(and(eq(ledgerEntries.tenantId, tenantId), eq(ledgerEntries.kind, 'charge')));

// 1,000 tokens: 2 credits at svc-workspace's rate, within the hold (the prompt's estimate plus max_tokens); the estimate of this answer is 1.
const USAGE = { prompt_tokens: 400, completion_tokens: 600 };
const ANSWER = 'The renewal dates are 1 March and 1 September; both contracts renew automatically.';
const messages = [{ role: 'user' as const, content: 'When do the contracts renew?' }];

describe('chat billing against the upstream', () => {
  it('asks for usage on a streamed call and charges what the upstream reports, the same as unstreamed', async () => {
    const streamed = await tenant();
    upstream.load([{ content: ANSWER, usage: USAGE }]);
    const stream = await streamed.client.chat.completions.create({ model: 'svc-workspace', messages, stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe(ANSWER);
    expect(upstream.seen[0]!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(usage).toMatchObject({ prompt_tokens: 400, completion_tokens: 600, total_tokens: 1_000 });
    const expected = modelCredits(1_000, 'svc-workspace', pricing);
    expect(await chargesOf(streamed.tenantId)).toEqual([{ amount: expected, usageBasis: 'reported' }]);

    const plain = await tenant();
    upstream.load([{ content: ANSWER, usage: USAGE }]);
    const completion = await plain.client.chat.completions.create({ model: 'svc-workspace', messages });
    expect(completion.usage).toMatchObject({ prompt_tokens: 400, completion_tokens: 600 });
    expect(await chargesOf(plain.tenantId)).toEqual([{ amount: expected, usageBasis: 'reported' }]);
  });

  it('asks for usage on a stream even when the client does not, and charges it', async () => {
    const t = await tenant();
    upstream.load([{ content: ANSWER, usage: USAGE }]);
    const stream = await t.client.chat.completions.create({ model: 'svc-workspace', messages, stream: true });
    for await (const chunk of stream) expect(chunk.usage ?? null).toBeNull();
    expect(upstream.seen[0]!.body.stream_options).toEqual({ include_usage: true });
    expect(await chargesOf(t.tenantId)).toEqual([{ amount: modelCredits(1_000, 'svc-workspace', pricing), usageBasis: 'reported' }]);
  });

  it('keeps the reported usage when it turns an answer that breaks the JSON schema into a refusal', async () => {
    const t = await tenant();
    upstream.load([{ content: '{"renewal": 12}', usage: USAGE }]);
    const completion = await t.client.chat.completions.create({
      model: 'svc-workspace',
      messages,
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: 'renewal',
          strict: true,
          schema: { type: 'object', properties: { renewal: { type: 'string' } }, required: ['renewal'], additionalProperties: false },
        },
      },
    });
    expect(completion.choices[0]!.message.refusal).toBeTruthy();
    expect(completion.usage).toMatchObject({ prompt_tokens: 400, completion_tokens: 600 });
    expect(await chargesOf(t.tenantId)).toEqual([{ amount: modelCredits(1_000, 'svc-workspace', pricing), usageBasis: 'reported' }]);
  });

  it('charges the byte-count estimate only when the upstream reports nothing, and the charge says it was estimated', async () => {
    const t = await tenant();
    upstream.load([{ content: ANSWER, usage: null }]);
    await t.client.chat.completions.create({ model: 'svc-workspace', messages });
    const [charge] = await chargesOf(t.tenantId);
    expect(charge).toMatchObject({ usageBasis: 'estimated' });
    expect(charge!.amount).toBeLessThan(modelCredits(1_000, 'svc-workspace', pricing));
    const usage = await (await fetch(`${app.url}/v1/usage`, { headers: { authorization: `Bearer ${t.key}` } })).json();
    expect(usage.settled_charges).toEqual([expect.objectContaining({ amount: charge!.amount, usage_basis: 'estimated' })]);
  });
});

describe("OpenAI's sampling parameters", () => {
  it('forwards temperature, top_p, seed, stop, the penalties and user exactly as sent', async () => {
    const t = await tenant();
    upstream.load([{ content: ANSWER }]);
    const sampling = { temperature: 0.2, top_p: 0.9, seed: 42, stop: ['\n\n', 'END'], presence_penalty: -0.5, frequency_penalty: 1.5, user: 'user-7' };
    await t.client.chat.completions.create({ model: 'svc-workspace', messages, ...sampling, max_completion_tokens: 300 });
    expect(upstream.seen[0]!.body).toMatchObject({ ...sampling, max_tokens: 300 });
  });

  it.each([
    ['temperature', 2.5],
    ['top_p', 1.5],
    ['seed', 1.5],
    ['stop', ['a', 'b', 'c', 'd', 'e']],
    ['presence_penalty', -3],
    ['frequency_penalty', 2.1],
  ])('refuses %s = %j with a 400 naming it', async (param, value) => {
    const t = await tenant();
    const error = await t.client.chat.completions.create({ model: 'svc-workspace', messages, [param]: value }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({
      code: 'invalid_request',
      param: expect.stringMatching(new RegExp(`^${param}`)),
    });
  });

  it('refuses n = 2 with a clear 400, charging nothing', async () => {
    const t = await tenant();
    const error = (await t.client.chat.completions.create({ model: 'svc-workspace', messages, n: 2 }).catch((e: unknown) => e)) as InstanceType<
      typeof OpenAI.BadRequestError
    >;
    expect(error.status).toBe(400);
    expect(error.error).toMatchObject({ param: 'n', message: expect.stringContaining('n=1') });
    expect(await chargesOf(t.tenantId)).toEqual([]);
  });
});
