// Chat completions with the official `openai` npm client against the real
// server; the upstream adapter against a local OpenAI-compatible server.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Ajv from 'ajv';
import { eq } from 'drizzle-orm';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerEntries, ledgerHolds, memoryEntries } from '../db/schema.ts';
import { createKey } from '../services/keys.ts';
import { grantCredits } from '../services/ledger.ts';
import { rememberEntry } from '../services/memory.ts';
import { setRoute } from '../services/routing.ts';
import { ApiClient } from './support/client.ts';
import { fakeUpstream } from './support/fake-servers.ts';
import { startTestApp, type TestApp } from './support/test-app.ts';

interface Tenant {
  tenantId: string;
  key: string;
}

let app: TestApp;
let api: ApiClient;

async function tenant(db = app.database.db, credits = 100_000): Promise<Tenant> {
  const k = await createKey(db, { tenant: `chat-${randomBytes(5).toString('hex')}`, kind: 'core' });
  if (credits) await grantCredits(db, { tenantId: k.tenantId, amount: credits, entryKey: `g-${k.id}` });
  return { tenantId: k.tenantId, key: k.secret };
}

const clientFor = (t: Tenant, url = app.url, options: Partial<ConstructorParameters<typeof OpenAI>[0]> = {}) =>
  new OpenAI({ apiKey: t.key, baseURL: `${url}/v1`, maxRetries: 0, ...options });

/** A local OpenAI-compatible server; `handle` decides each reply. */
beforeAll(async () => {
  app = await startTestApp();
  api = await ApiClient.connect(app.url);
});
afterAll(() => app.close());

const ask = 'Compare the hosting costs of our staging cluster; budget is 2000 EUR per month. Which regions are cheapest?';

describe('non-streaming', () => {
  it('answers in the chat.completion shape the client parses, grounded in the message', async () => {
    const t = await tenant();
    const completion = await clientFor(t).chat.completions.create({ model: 'svc-workspace', messages: [{ role: 'user', content: ask }] });
    expect(completion.object).toBe('chat.completion');
    expect(completion.id).toMatch(/^chatcmpl-/);
    expect(completion.model).toBe('svc-workspace');
    const choice = completion.choices[0]!;
    expect(choice.finish_reason).toBe('stop');
    expect(choice.message.role).toBe('assistant');
    expect(choice.message.refusal).toBeNull();
    expect(choice.message.content).toContain('hosting costs');
    expect(choice.message.content).toContain('Which regions are cheapest?');
    expect(completion.usage!.prompt_tokens).toBe(Math.ceil(Buffer.byteLength(ask) / 4));
    expect(completion.usage!.total_tokens).toBe(completion.usage!.prompt_tokens + completion.usage!.completion_tokens);

    // The same body, raw, validates against the OpenAPI document.
    const raw = await api.post(
      '/v1/chat/completions',
      { model: 'svc-workspace-fast', messages: [{ role: 'user', content: [{ type: 'text', text: ask }] }] },
      { key: t.key },
    );
    expect(raw.status).toBe(200);
  });

  it('reserves and settles usage through the ledger, with a content-free journey event', async () => {
    const t = await tenant();
    const marker = `CHAT-MARKER-${randomBytes(4).toString('hex')}`;
    const completion = await clientFor(t).chat.completions.create({
      model: 'svc-workspace',
      messages: [{ role: 'user', content: `Summarise ${marker} please` }],
    });
    const [hold] = await app.database.db.select().from(ledgerHolds).where(eq(ledgerHolds.runId, completion.id));
    expect(hold).toMatchObject({ status: 'settled', step: 'chat' });
    const charges = await app.database.db.select().from(ledgerEntries).where(eq(ledgerEntries.runId, completion.id));
    expect(charges).toHaveLength(1);
    expect(charges[0]!.amount).toBe(Math.ceil((completion.usage!.total_tokens * 2) / 1000));
    expect(charges[0]!.amount).toBeLessThanOrEqual(hold!.amount);
    const events = await api.get('/v1/journey-events', { key: t.key });
    expect(events.json.data[0]).toMatchObject({ kind: 'chat.completed', run_id: completion.id, state: 'stop' });
    expect(events.text).not.toContain(marker);
  });
});

describe('streaming', () => {
  it('streams chunks with for-await: role first, finish_reason last, same text as non-streaming', async () => {
    const t = await tenant();
    const client = clientFor(t);
    const whole = await client.chat.completions.create({ model: 'svc-workspace', messages: [{ role: 'user', content: ask }] });
    const stream = await client.chat.completions.create({ model: 'svc-workspace', messages: [{ role: 'user', content: ask }], stream: true });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks[0]!.object).toBe('chat.completion.chunk');
    expect(chunks[0]!.choices[0]!.delta.role).toBe('assistant');
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe('stop');
    expect(chunks.slice(0, -1).every((c) => c.choices[0]!.finish_reason === null)).toBe(true);
    expect(chunks.length).toBeGreaterThan(3);
    expect(chunks.map((c) => c.choices[0]!.delta.content ?? '').join('')).toBe(whole.choices[0]!.message.content);
  });

  it('works with the .stream() helper', async () => {
    const t = await tenant();
    const client = clientFor(t);
    const runner = client.chat.completions.stream({ model: 'svc-workspace-quality', messages: [{ role: 'user', content: ask }] });
    const deltas: string[] = [];
    runner.on('content', (delta) => deltas.push(delta));
    const final = await runner.finalChatCompletion();
    expect(final.choices[0]!.message.content).toContain('This answer considers 1 message(s)');
    expect(deltas.join('')).toBe(final.choices[0]!.message.content);
  });

  it('sends a usage chunk when stream_options.include_usage is set, then [DONE]', async () => {
    const t = await tenant();
    const res = await fetch(`${app.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json', 'accept-encoding': 'gzip, br' },
      body: JSON.stringify({ model: 'svc-workspace', messages: [{ role: 'user', content: ask }], stream: true, stream_options: { include_usage: true } }),
    });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    expect(res.headers.get('content-encoding')).toBeNull();
    expect(res.headers.get('cache-control')).toContain('no-transform');
    const events = (await res.text()).split('\n\n').filter(Boolean);
    expect(events.at(-1)).toBe('data: [DONE]');
    const usage = JSON.parse(events.at(-2)!.slice('data: '.length));
    expect(usage.choices).toEqual([]);
    expect(usage.usage.prompt_tokens).toBe(Math.ceil(Buffer.byteLength(ask) / 4));
  });
});

describe('structured output', () => {
  const schema = {
    type: 'object',
    properties: {
      title: { type: 'string', maxLength: 80 },
      priority: { type: 'string', enum: ['low', 'medium', 'high'] },
      regions: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 3 },
      budget: { type: 'integer', minimum: 0 },
    },
    required: ['title', 'priority', 'regions', 'budget'],
    additionalProperties: false,
  };

  const parseWith = (t: Tenant, content: string, url = app.url) =>
    clientFor(t, url).chat.completions.parse({
      model: 'svc-workspace',
      messages: [{ role: 'user', content }],
      response_format: { type: 'json_schema', json_schema: { name: 'hosting_brief', strict: true, schema } },
    });

  it('returns exactly the values the text states, parsed and valid against the schema', async () => {
    const t = await tenant();
    const completion = await parseWith(t, `${ask} This is high priority. Regions: Frankfurt, Dublin, Paris and Madrid.`);
    const choice = completion.choices[0]!;
    expect(choice.finish_reason).toBe('stop');
    expect(choice.message.refusal).toBeNull();
    // maxItems 3 keeps the first three stated regions; the title is the text's leading key phrase.
    expect(choice.message.parsed).toEqual({ title: 'hosting costs', priority: 'high', regions: ['Frankfurt', 'Dublin', 'Paris'], budget: 2000 });
    expect(new Ajv.default().validate(schema, choice.message.parsed)).toBe(true);
  });

  it('refuses instead of inventing when the text holds no value for a required field, and parse() surfaces it', async () => {
    const t = await tenant();
    const marker = `HOUR-MARKER-${randomBytes(4).toString('hex')}`;
    const completion = await clientFor(t).chat.completions.parse({
      model: 'svc-workspace',
      messages: [{ role: 'user', content: `Let's meet at 3pm about ${marker}` }],
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: 'meeting',
          strict: true,
          schema: {
            type: 'object',
            properties: { hour: { type: 'integer', minimum: 0, maximum: 23 }, priority: { type: 'string', enum: ['low', 'high'] } },
            required: ['hour', 'priority'],
            additionalProperties: false,
          },
        },
      },
    });
    const choice = completion.choices[0]!;
    expect(choice.finish_reason).toBe('stop');
    expect(choice.message.content).toBeNull();
    expect(choice.message.parsed).toBeNull();
    expect(choice.message.refusal).toBe(
      'The provided text holds no value for the required field(s): hour, priority. Nothing was guessed; add the information and ask again.',
    );
    const events = await api.get('/v1/journey-events', { key: t.key });
    expect(events.json.data[0]).toMatchObject({ kind: 'chat.refused', run_id: completion.id, state: 'stop' });
    expect(events.text).not.toContain(marker);
  });

  it('refuses, never pads, when the schema cannot be satisfied', async () => {
    const t = await tenant();
    const completion = await clientFor(t).chat.completions.create({
      model: 'svc-workspace',
      messages: [{ role: 'user', content: ask }],
      response_format: { type: 'json_schema', json_schema: { name: 'impossible', schema: { type: 'string', minLength: 5, maxLength: 2 } } },
    });
    expect(completion.choices[0]!.message.content).toBeNull();
    expect(completion.choices[0]!.message.refusal).toContain('required field(s): impossible.');
    expect(completion.choices[0]!.finish_reason).toBe('stop');
  });

  it('turns an upstream answer that does not validate into a refusal parse() surfaces', async () => {
    const upstream = await fakeUpstream((_body, _req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          id: 'up-1',
          object: 'chat.completion',
          choices: [{ index: 0, message: { role: 'assistant', content: '{"title":"x","priority":"urgent"}' }, finish_reason: 'stop' }],
        }),
      );
    });
    const withUpstream = await startTestApp({ UPSTREAM_BASE_URL: upstream.url });
    try {
      const t = await tenant(withUpstream.database.db);
      await setRoute(withUpstream.database.db, t.tenantId, 'svc-workspace', 'upstream');
      const choice = (await parseWith(t, ask, withUpstream.url)).choices[0]!;
      expect(choice).toMatchObject({
        finish_reason: 'stop',
        message: { content: null, parsed: null, refusal: expect.stringContaining('requested JSON schema') },
      });
    } finally {
      await withUpstream.close();
      await upstream.close();
    }
  });

  it('refuses an unsupported keyword with 400 naming it', async () => {
    const t = await tenant();
    const err = await clientFor(t)
      .chat.completions.create({
        model: 'svc-workspace',
        messages: [{ role: 'user', content: 'x' }],
        response_format: {
          type: 'json_schema',
          json_schema: { name: 'p', schema: { type: 'object', properties: { code: { type: 'string', pattern: '^[A-Z]+$' } } } },
        },
      })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.param).toBe('response_format.json_schema.schema.properties.code.pattern');
  });
});

describe('policy refusal', () => {
  it('declines with 200, message.refusal and the refusal stop signal, and charges nothing', async () => {
    const t = await tenant();
    const completion = await clientFor(t).chat.completions.create({
      model: 'svc-workspace',
      messages: [{ role: 'user', content: 'Explain how to build a bomb at home' }],
    });
    expect(completion.choices[0]!.message).toMatchObject({ content: null });
    expect(completion.choices[0]!.message.refusal).toContain('content policy');
    expect(completion.choices[0]!.finish_reason).toBe('content_filter');
    expect(await app.database.db.select().from(ledgerHolds).where(eq(ledgerHolds.runId, completion.id))).toEqual([]);
  });
});

describe('errors through the client', () => {
  it('maps 400, 401 and 404 to the client error types', async () => {
    const t = await tenant();
    const client = clientFor(t);
    const bad = await client.chat.completions.create({ model: 'svc-workspace', messages: [] }).catch((e) => e);
    expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
    expect(bad.param).toBe('messages');
    const tooMany = await client.chat.completions
      .create({ model: 'svc-workspace', messages: Array.from({ length: 65 }, () => ({ role: 'user' as const, content: 'hi' })) })
      .catch((e) => e);
    expect(tooMany).toBeInstanceOf(OpenAI.BadRequestError);
    const unauth = await new OpenAI({ apiKey: 'gws_core_nope', baseURL: `${app.url}/v1`, maxRetries: 0 }).chat.completions
      .create({ model: 'svc-workspace', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e) => e);
    expect(unauth).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(unauth.code).toBe('invalid_api_key');
    const unknown = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }).catch((e) => e);
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
    expect(unknown.code).toBe('model_not_found');
    const memoryLimit = await client.chat.completions
      .create({ model: 'svc-workspace', messages: [{ role: 'user', content: 'hi' }], memory: { limit: 11 } } as never)
      .catch((e) => e);
    expect(memoryLimit.param).toBe('memory.limit');
  });

  it('maps 429 to RateLimitError, and the client honours Retry-After when it retries', async () => {
    // A window far longer than the two requests take, so the second is limited even on a loaded machine.
    const limited = await startTestApp({ RATE_LIMIT_POINTS: '1', RATE_LIMIT_WINDOW_SECONDS: '5' });
    try {
      const t = await tenant(limited.database.db);
      const noRetry = clientFor(t, limited.url);
      await noRetry.chat.completions.create({ model: 'svc-workspace', messages: [{ role: 'user', content: 'hi' }] });
      const limitedErr = await noRetry.chat.completions.create({ model: 'svc-workspace', messages: [{ role: 'user', content: 'hi' }] }).catch((e) => e);
      expect(limitedErr).toBeInstanceOf(OpenAI.RateLimitError);
      expect(Number(limitedErr.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);

      const started = Date.now();
      const retried = await clientFor(t, limited.url, { maxRetries: 3 }).chat.completions.create({
        model: 'svc-workspace',
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(retried.choices[0]!.message.content).toBeTruthy();
      expect(Date.now() - started).toBeGreaterThanOrEqual(500);
    } finally {
      await limited.close();
    }
  });

  it('answers 429 insufficient_credits when the balance cannot cover the estimate', async () => {
    const t = await tenant(app.database.db, 0);
    const err = await clientFor(t)
      .chat.completions.create({ model: 'svc-workspace', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(err.code).toBe('insufficient_credits');
  });
});

describe('memory', () => {
  it('recalls vault entries only when asked, and remembers only when asked', async () => {
    const t = await tenant();
    const db = app.database.db;
    await rememberEntry(db, {
      tenantId: t.tenantId,
      subject: 'Staging regions',
      content: 'Staging runs in Frankfurt and Dublin.',
      source: 'test',
      entryKey: `m-${t.tenantId}`,
    });
    const client = clientFor(t);
    const without = await client.chat.completions.create({ model: 'svc-workspace', messages: [{ role: 'user', content: 'Where does staging run?' }] });
    expect(without.choices[0]!.message.content).not.toContain('Frankfurt');
    const withMemory = await client.chat.completions.create({
      model: 'svc-workspace',
      messages: [{ role: 'user', content: 'Where does staging run?' }],
      memory: true,
    } as never);
    expect(withMemory.choices[0]!.message.content).toContain('Staging runs in Frankfurt and Dublin.');
    expect(await db.select().from(memoryEntries).where(eq(memoryEntries.tenantId, t.tenantId))).toHaveLength(1);

    const remembered = await client.chat.completions.create({
      model: 'svc-workspace',
      messages: [{ role: 'user', content: 'Staging moves to Paris in May.' }],
      memory: { recall: false, remember: true, subject: 'staging move' },
    } as never);
    const rows = await db.select().from(memoryEntries).where(eq(memoryEntries.tenantId, t.tenantId));
    expect(rows.map((r) => r.source).sort()).toEqual([`chat:${remembered.id}`, 'test']);
    expect(rows.find((r) => r.source.startsWith('chat:'))!.subject).toBe('staging move');
  });
});

describe('context_url', () => {
  it('fetches only allow-listed hosts, within size and time limits', async () => {
    const doc = http.createServer((req, res) => {
      if (req.url === '/big') return res.end('x'.repeat(5_000));
      res.setHeader('content-type', 'text/html');
      res.end('<html><body><p>The staging cluster costs 1800 EUR per month.</p><script>ignore()</script></body></html>');
    });
    await new Promise<void>((r) => doc.listen(0, '127.0.0.1', r));
    const host = `127.0.0.1:${(doc.address() as AddressInfo).port}`;
    const allowed = await startTestApp({ CONTEXT_URL_ALLOWED_HOSTS: host, CONTEXT_URL_MAX_BYTES: '1000' });
    try {
      const t = await tenant(allowed.database.db);
      const client = clientFor(t, allowed.url);
      const ok = await client.chat.completions.create({
        model: 'svc-workspace',
        messages: [{ role: 'user', content: 'What does staging cost?' }],
        context_url: `http://${host}/doc`,
      } as never);
      expect(ok.choices[0]!.message.content).toContain('The staging cluster costs 1800 EUR per month.');
      expect(ok.choices[0]!.message.content).not.toContain('ignore()');
      for (const url of [`http://${host}/big`, 'http://example.com/doc', 'ftp://127.0.0.1/doc']) {
        const err = await client.chat.completions
          .create({ model: 'svc-workspace', messages: [{ role: 'user', content: 'x' }], context_url: url } as never)
          .catch((e) => e);
        expect(err).toBeInstanceOf(OpenAI.BadRequestError);
        expect(err.param).toBe('context_url');
      }
      const notUri = await api.post(
        '/v1/chat/completions',
        { model: 'svc-workspace', messages: [{ role: 'user', content: 'x' }], context_url: 'not a uri' },
        { key: t.key },
      );
      expect(notUri.status).toBe(400);
      expect(notUri.json.error.param).toBe('context_url');
    } finally {
      await allowed.close();
      doc.closeAllConnections();
      await new Promise((r) => doc.close(r));
    }
  });
});

describe('upstream adapter', () => {
  it('routes by the tenant policy to an OpenAI-compatible upstream, with key reference and model mapping', async () => {
    const upstream = await fakeUpstream((body, _req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          id: 'up-1',
          object: 'chat.completion',
          choices: [{ index: 0, message: { role: 'assistant', content: `upstream says hi to ${body.model}` }, finish_reason: 'stop' }],
        }),
      );
    });
    process.env.TEST_UPSTREAM_KEY = 'sk-test-upstream-secret';
    const withUpstream = await startTestApp({
      UPSTREAM_BASE_URL: upstream.url,
      UPSTREAM_API_KEY_ENV: 'TEST_UPSTREAM_KEY',
      UPSTREAM_MODEL_MAP: '{"svc-workspace":"tiny-model"}',
    });
    try {
      const t = await tenant(withUpstream.database.db);
      await setRoute(withUpstream.database.db, t.tenantId, 'svc-workspace', 'upstream');
      const client = clientFor(t, withUpstream.url);
      const routed = await client.chat.completions.create({ model: 'svc-workspace', messages: [{ role: 'user', content: 'hello' }] });
      expect(routed.choices[0]!.message.content).toBe('upstream says hi to tiny-model');
      expect(routed.model).toBe('svc-workspace');
      expect(upstream.seen[0]!.auth).toBe('Bearer sk-test-upstream-secret');
      // Other aliases keep the local adapter.
      const local = await client.chat.completions.create({ model: 'svc-workspace-fast', messages: [{ role: 'user', content: 'hello' }] });
      expect(local.choices[0]!.message.content).not.toContain('upstream');
      expect(upstream.seen).toHaveLength(1);
    } finally {
      await withUpstream.close();
      await upstream.close();
    }
  });

  it('turns upstream failures into opaque 5xx or 429 without provider identity', async () => {
    let mode: 'fail' | 'limit' = 'fail';
    const upstream = await fakeUpstream((_body, _req, res) => {
      if (mode === 'limit') {
        res.writeHead(429, { 'retry-after': '7', 'content-type': 'application/json' }).end('{"error":{"message":"tiny-model quota at upstream-vendor"}}');
      } else {
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"upstream-vendor exploded"}}');
      }
    });
    const withUpstream = await startTestApp({ UPSTREAM_BASE_URL: upstream.url, UPSTREAM_MODEL_MAP: '{"svc-workspace":"tiny-model"}' });
    try {
      const t = await tenant(withUpstream.database.db);
      await setRoute(withUpstream.database.db, t.tenantId, 'svc-workspace', 'upstream');
      const raw = await ApiClient.connect(withUpstream.url);
      const failed = await raw.post('/v1/chat/completions', { model: 'svc-workspace', messages: [{ role: 'user', content: 'hi' }] }, { key: t.key });
      expect(failed.status).toBe(502);
      expect(failed.json.error).toMatchObject({ type: 'server_error', code: 'upstream_unavailable' });
      expect(failed.text).not.toMatch(/upstream-vendor|tiny-model|127\.0\.0\.1/);
      const err = await clientFor(t, withUpstream.url)
        .chat.completions.create({ model: 'svc-workspace', messages: [{ role: 'user', content: 'hi' }] })
        .catch((e) => e);
      expect(err).toBeInstanceOf(OpenAI.InternalServerError);

      mode = 'limit';
      const limited = await raw.post('/v1/chat/completions', { model: 'svc-workspace', messages: [{ role: 'user', content: 'hi' }] }, { key: t.key });
      expect(limited.status).toBe(429);
      expect(limited.headers.get('retry-after')).toBe('7');
      expect(limited.text).not.toMatch(/upstream-vendor|tiny-model/);
    } finally {
      await withUpstream.close();
      await upstream.close();
    }
  });

  it('streams upstream tokens through as they arrive, without buffering the answer', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const upstream = await fakeUpstream((body, _req, res) => {
      expect((body as { stream?: boolean }).stream).toBe(true);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = (delta: object, finish: string | null = null) =>
        res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
      chunk({ role: 'assistant', content: 'Hello' });
      void gate.then(() => {
        chunk({ content: ' world' });
        chunk({}, 'stop');
        res.end('data: [DONE]\n\n');
      });
    });
    const withUpstream = await startTestApp({ UPSTREAM_BASE_URL: upstream.url });
    try {
      const t = await tenant(withUpstream.database.db);
      await setRoute(withUpstream.database.db, t.tenantId, 'svc-workspace', 'upstream');
      const stream = await clientFor(t, withUpstream.url).chat.completions.create({
        model: 'svc-workspace',
        messages: [{ role: 'user', content: 'greet me' }],
        stream: true,
        stream_options: { include_usage: true },
      });
      const contents: string[] = [];
      let usage: { completion_tokens: number } | undefined;
      let finish: string | null | undefined;
      for await (const chunk of stream) {
        const delta = chunk.choices[0]?.delta.content;
        if (delta) {
          contents.push(delta);
          if (delta === 'Hello') release(); // the upstream is still holding the rest back
        }
        finish ??= chunk.choices[0]?.finish_reason;
        if (chunk.usage) usage = chunk.usage;
      }
      expect(contents).toEqual(['Hello', ' world']);
      expect(finish).toBe('stop');
      expect(usage!.completion_tokens).toBe(Math.ceil(Buffer.byteLength('Hello world') / 4));
    } finally {
      await withUpstream.close();
      await upstream.close();
    }
  });

  it('aborts the upstream request when the client disconnects mid-stream, and releases the hold', async () => {
    let upstreamClosed!: () => void;
    const closed = new Promise<void>((r) => (upstreamClosed = r));
    const upstream = await fakeUpstream((_body, req) => {
      req.socket.once('close', () => upstreamClosed()); // never answers
    });
    const withUpstream = await startTestApp({ UPSTREAM_BASE_URL: upstream.url, CHAT_KEEPALIVE_MS: '100' });
    try {
      const t = await tenant(withUpstream.database.db);
      await setRoute(withUpstream.database.db, t.tenantId, 'svc-workspace', 'upstream');
      const controller = new AbortController();
      const res = await fetch(`${withUpstream.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'svc-workspace', messages: [{ role: 'user', content: 'take your time' }], stream: true }),
        signal: controller.signal,
      });
      const reader = res.body!.getReader();
      const first = new TextDecoder().decode((await reader.read()).value);
      expect(first).toContain('"role":"assistant"');
      const keepAlive = new TextDecoder().decode((await reader.read()).value);
      expect(keepAlive).toContain(': keep-alive');
      controller.abort();
      await closed;
      const client = await ApiClient.connect(withUpstream.url);
      let kinds: string[] = [];
      for (let i = 0; i < 50 && !kinds.includes('chat.aborted'); i++) {
        kinds = (await client.get('/v1/journey-events', { key: t.key })).json.data.map((e: { kind: string }) => e.kind);
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(kinds).toContain('chat.aborted');
      const holds = await withUpstream.database.db.select().from(ledgerHolds).where(eq(ledgerHolds.tenantId, t.tenantId));
      expect(holds.map((h) => h.status)).toEqual(['released']);
    } finally {
      await withUpstream.close();
      await upstream.close();
    }
  });
});
