// Structured output as the official clients send it, against the real server:
// the Node `openai` client's .parse() with zodResponseFormat (zod 4), a request
// body recorded from the Python client's .parse() with a nested pydantic model
// (tests/fixtures/pydantic-nested-optional.request.json, written by
// scripts/record-pydantic-schema.py), json_object and text, the pass-through to
// an upstream, a model's answer held to the request's text (a scripted upstream
// that invents a value), and the 400s for what the subset does not cover.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import Ajv from 'ajv';
import OpenAI from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createKey } from '../services/keys.ts';
import { grantCredits } from '../services/ledger.ts';
import { setRoute } from '../services/routing.ts';
import { ApiClient } from './support/client.ts';
import { fakeUpstream, scriptedUpstream } from './support/fake-servers.ts';
import { startTestApp, type TestApp } from './support/test-app.ts';

interface Tenant {
  tenantId: string;
  key: string;
}

let app: TestApp;
let api: ApiClient;

beforeAll(async () => {
  app = await startTestApp();
  api = await ApiClient.connect(app.url);
});
afterAll(() => app.close());

async function tenant(db = app.database.db): Promise<Tenant> {
  const k = await createKey(db, { tenant: `so-${randomBytes(5).toString('hex')}`, kind: 'core' });
  await grantCredits(db, { tenantId: k.tenantId, amount: 100_000, entryKey: `g-${k.id}` });
  return { tenantId: k.tenantId, key: k.secret };
}

const clientFor = (t: Tenant, url = app.url) => new OpenAI({ apiKey: t.key, baseURL: `${url}/v1`, maxRetries: 0 });

type Json = Record<string, unknown>;

const user = (content: string) => [{ role: 'user' as const, content }];

// zod 4, the project's zod, straight into openai v6's helper: no zod/v3 or zod/v4 import path needed.
const Meeting = z.object({
  kind: z.literal('meeting'),
  title: z.string(),
  hour: z.int().min(0).max(23),
  room: z.string().nullable(),
  priority: z.enum(['low', 'medium', 'high']).nullable(),
  location: z.object({ city: z.string(), street: z.string().nullable() }),
  attendees: z.array(z.object({ name: z.string(), role: z.string().nullable() })).max(5),
});

describe('Node openai .parse() with zodResponseFormat (zod 4)', () => {
  it('sends $schema, anyOf with null and type arrays, and gets the stated values back parsed, null where none is stated', async () => {
    const format = zodResponseFormat(Meeting, 'meeting');
    const sent = format.json_schema.schema as Json;
    expect(sent.$schema).toBe('http://json-schema.org/draft-07/schema#');
    expect((sent.properties as Json).priority).toEqual({ anyOf: [{ type: 'string', enum: ['low', 'medium', 'high'] }, { type: 'null' }] });
    expect(((sent.properties as Json).room as Json).type).toEqual(['string', 'null']);

    const t = await tenant();
    const completion = await clientFor(t).chat.completions.parse({
      model: 'svc-workspace',
      messages: user('Plan the design review. The title is Q3 design review. The hour is 14. The city is Berlin. The name is Ada.'),
      response_format: format,
    });
    const choice = completion.choices[0]!;
    expect(choice.finish_reason).toBe('stop');
    expect(choice.message.refusal).toBeNull();
    expect(choice.message.parsed).toEqual({
      kind: 'meeting',
      title: 'Q3 design review',
      hour: 14,
      room: null,
      priority: null,
      location: { city: 'Berlin', street: null },
      attendees: [{ name: 'Ada', role: null }],
    });
  });

  it('refuses, and parse() surfaces it, when a required non-nullable field has no stated value', async () => {
    const t = await tenant();
    const completion = await clientFor(t).chat.completions.parse({
      model: 'svc-workspace',
      messages: user('The title is Q3 design review. The room is Atlas. This is high priority.'),
      response_format: zodResponseFormat(Meeting, 'meeting'),
    });
    const choice = completion.choices[0]!;
    expect(choice.finish_reason).toBe('stop');
    expect(choice.message.content).toBeNull();
    expect(choice.message.parsed).toBeNull();
    expect(choice.message.refusal).toBe(
      'The provided text holds no value for the required field(s): hour, location.city. Nothing was guessed; add the information and ask again.',
    );
  });

  it('accepts $defs from schemaDefinitions and zod toJSONSchema (2020-12) output', async () => {
    const Address = z.object({ city: z.string(), street: z.string().nullable() });
    const format = zodResponseFormat(z.object({ home: Address, work: Address.nullable() }), 'homes', { schemaDefinitions: { Address } });
    expect(JSON.stringify(format.json_schema.schema)).toContain('"$ref":"#/definitions/Address"');
    const t = await tenant();
    const completion = await clientFor(t).chat.completions.parse({ model: 'svc-workspace', messages: user('The city is Lisbon.'), response_format: format });
    expect(completion.choices[0]!.message.parsed).toEqual({ home: { city: 'Lisbon', street: null }, work: null });

    const schema = z.toJSONSchema(z.object({ city: z.string(), zip: z.string().optional() }));
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    const raw = await clientFor(t).chat.completions.create({
      model: 'svc-workspace',
      messages: user('The city is Porto.'),
      response_format: { type: 'json_schema', json_schema: { name: 'place', schema: schema as Json } },
    });
    expect(JSON.parse(raw.choices[0]!.message.content!)).toEqual({ city: 'Porto' });
  });
});

describe('a request body recorded from the Python client (pydantic, nested, Optional)', () => {
  const fixture = JSON.parse(readFileSync(new URL('./fixtures/pydantic-nested-optional.request.json', import.meta.url), 'utf8')) as {
    body: Json & { response_format: { json_schema: { schema: Json } } };
  };
  const schema = fixture.body.response_format.json_schema.schema;

  it('is what .parse() sends: $defs with local $ref, anyOf with null, const, all properties required', () => {
    expect(Object.keys(schema.$defs as Json)).toEqual(['Address', 'Attendee']);
    expect((schema.properties as Json).location).toEqual({ $ref: '#/$defs/Address' });
    expect((schema.properties as Json).room).toEqual({ anyOf: [{ type: 'string' }, { type: 'null' }], title: 'Room' });
    expect(schema.required).toEqual(Object.keys(schema.properties as Json));
  });

  it('answers 200 with JSON that validates against the schema and holds the stated values', async () => {
    const t = await tenant();
    const res = await api.post('/v1/chat/completions', fixture.body, { key: t.key });
    expect(res.status).toBe(200);
    const json = res.json as { choices: { finish_reason: string; message: { content: string; refusal: string | null } }[] };
    expect(json.choices[0]!.finish_reason).toBe('stop');
    const parsed = JSON.parse(json.choices[0]!.message.content);
    expect(new Ajv.default({ strict: false }).validate(schema, parsed)).toBe(true);
    expect(parsed).toEqual({
      kind: 'meeting',
      title: 'Q3 design review',
      room: null,
      hour: 14,
      priority: 'high',
      location: { city: 'Berlin', street: null },
      attendees: [{ name: 'Ada', role: null }],
    });
  });

  it('streams the same JSON when the body asks for a stream', async () => {
    const t = await tenant();
    const res = await fetch(`${app.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...fixture.body, stream: true }),
    });
    const events = (await res.text()).split('\n\n').filter((e) => e.startsWith('data: {'));
    const content = events.map((e) => JSON.parse(e.slice('data: '.length)).choices[0]?.delta?.content ?? '').join('');
    expect(JSON.parse(content)).toMatchObject({ hour: 14, room: null, location: { city: 'Berlin', street: null } });
  });
});

describe('a discriminated union recorded from the Python client (oneOf with discriminator)', () => {
  const fixture = JSON.parse(readFileSync(new URL('./fixtures/pydantic-discriminated-union.request.json', import.meta.url), 'utf8')) as {
    body: Json & { response_format: { json_schema: { schema: Json } } };
  };
  const schema = fixture.body.response_format.json_schema.schema;

  it('takes the branch whose discriminating const the text mentions', async () => {
    expect(Object.keys((schema.properties as { event: Json }).event)).toEqual(['discriminator', 'oneOf', 'title']);
    const t = await tenant();
    const res = await api.post('/v1/chat/completions', fixture.body, { key: t.key });
    expect(res.status).toBe(200);
    const parsed = JSON.parse((res.json as { choices: { message: { content: string } }[] }).choices[0]!.message.content);
    expect(parsed).toEqual({ event: { kind: 'visit', city: 'Lyon', street: null } });
    expect(new Ajv.default({ strict: false }).validate(schema, parsed)).toBe(true);
  });

  it('refuses when the text names no branch', async () => {
    const t = await tenant();
    const body = { ...fixture.body, messages: user('The hour is 10.') };
    const res = await api.post('/v1/chat/completions', body, { key: t.key });
    expect((res.json as { choices: { message: Json }[] }).choices[0]!.message).toMatchObject({
      content: null,
      refusal: expect.stringContaining('required field(s): event.'),
    });
  });
});

describe('response_format json_object and text', () => {
  it('json_object: the local answer as {"answer": ...}, a JSON object through the official client', async () => {
    const t = await tenant();
    const client = clientFor(t);
    const ask = 'Compare the hosting costs of our staging cluster. Which regions are cheapest?';
    const text = await client.chat.completions.create({ model: 'svc-workspace', messages: user(ask) });
    const json = await client.chat.completions.create({ model: 'svc-workspace', messages: user(ask), response_format: { type: 'json_object' } });
    expect(json.choices[0]!.finish_reason).toBe('stop');
    const object = JSON.parse(json.choices[0]!.message.content!);
    expect(typeof object === 'object' && object !== null && !Array.isArray(object)).toBe(true);
    expect(object).toEqual({ answer: text.choices[0]!.message.content });
  });

  it('text: the default, accepted and answered as without response_format', async () => {
    const t = await tenant();
    const client = clientFor(t);
    const plain = await client.chat.completions.create({ model: 'svc-workspace', messages: user('Where does staging run?') });
    const text = await client.chat.completions.create({ model: 'svc-workspace', messages: user('Where does staging run?'), response_format: { type: 'text' } });
    expect(text.choices[0]!.message.content).toBe(plain.choices[0]!.message.content);
  });

  it('any other type is 400 naming response_format', async () => {
    const t = await tenant();
    const res = await api.post('/v1/chat/completions', { model: 'svc-workspace', messages: user('x'), response_format: { type: 'xml' } }, { key: t.key });
    expect(res.status).toBe(400);
    expect((res.json as { error: { param: string } }).error.param).toMatch(/^response_format/);
  });
});

describe('upstream pass-through', () => {
  async function withUpstream(reply: (body: Json) => string, run: (t: Tenant, url: string, seen: { body: Json }[]) => Promise<void>) {
    const upstream = await fakeUpstream((body, _req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          id: 'up',
          object: 'chat.completion',
          choices: [{ index: 0, message: { role: 'assistant', content: reply(body as Json) }, finish_reason: 'stop' }],
        }),
      );
    });
    const served = await startTestApp({ UPSTREAM_BASE_URL: upstream.url });
    try {
      const t = await tenant(served.database.db);
      await setRoute(served.database.db, t.tenantId, 'svc-workspace', 'upstream');
      await run(t, served.url, upstream.seen as { body: Json }[]);
    } finally {
      await served.close();
      await upstream.close();
    }
  }

  it('json_schema: the schema goes upstream as the client sent it, and a valid answer is parsed', async () => {
    const format = zodResponseFormat(Meeting, 'meeting');
    const answer = { kind: 'meeting', title: 'Review', hour: 9, room: null, priority: 'low', location: { city: 'Oslo', street: null }, attendees: [] };
    await withUpstream(
      () => JSON.stringify(answer),
      async (t, url, seen) => {
        // The text states every value the answer has: it is held to the text (a model's answer may state nothing else).
        const completion = await clientFor(t, url).chat.completions.parse({
          model: 'svc-workspace',
          messages: user('Plan the Review meeting at 9 in Oslo, low priority.'),
          response_format: format,
        });
        expect(completion.choices[0]!.message.parsed).toEqual(answer);
        expect(seen[0]!.body.response_format).toEqual({
          type: 'json_schema',
          json_schema: { name: 'meeting', schema: format.json_schema.schema, strict: true },
        });
      },
    );
  });

  it("json_schema: the client's description and strict: false go upstream too", async () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } } };
    await withUpstream(
      () => '{"city":"Oslo"}',
      async (t, url, seen) => {
        const completion = await clientFor(t, url).chat.completions.create({
          model: 'svc-workspace',
          messages: user('The office is in Oslo. Where?'),
          response_format: { type: 'json_schema', json_schema: { name: 'place', description: 'A place.', schema, strict: false } },
        });
        expect(JSON.parse(completion.choices[0]!.message.content!)).toEqual({ city: 'Oslo' });
        expect(seen[0]!.body.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'place', description: 'A place.', schema, strict: false } });
      },
    );
  });

  it('json_schema: an answer that does not validate (a nullable field left out) is a refusal', async () => {
    await withUpstream(
      () => JSON.stringify({ kind: 'meeting', title: 'Review', hour: 9, priority: 'low', location: { city: 'Oslo', street: null }, attendees: [] }),
      async (t, url) => {
        const choice = (
          await clientFor(t, url).chat.completions.parse({
            model: 'svc-workspace',
            messages: user('Plan it.'),
            response_format: zodResponseFormat(Meeting, 'meeting'),
          })
        ).choices[0]!;
        expect(choice).toMatchObject({
          finish_reason: 'stop',
          message: { content: null, parsed: null, refusal: 'I could not produce an answer that satisfies the requested JSON schema.' },
        });
      },
    );
  });

  it('json_object: passed through; a JSON object answer is kept, anything else is a refusal', async () => {
    const answers = ['{"region":"eu-west-1"}', '[1,2]', 'Sure! {"region": 1}'];
    await withUpstream(
      () => answers.shift()!,
      async (t, url, seen) => {
        const client = clientFor(t, url);
        const ok = await client.chat.completions.create({
          model: 'svc-workspace',
          messages: user('Answer in JSON.'),
          response_format: { type: 'json_object' },
        });
        expect(seen[0]!.body.response_format).toEqual({ type: 'json_object' });
        expect(JSON.parse(ok.choices[0]!.message.content!)).toEqual({ region: 'eu-west-1' });
        for (let i = 0; i < 2; i++) {
          const bad = await client.chat.completions.create({
            model: 'svc-workspace',
            messages: user('Answer in JSON.'),
            response_format: { type: 'json_object' },
          });
          expect(bad.choices[0]).toMatchObject({
            finish_reason: 'stop',
            message: { content: null, refusal: 'I could not produce an answer that is a JSON object.' },
          });
        }
      },
    );
  });
});

describe("a model's answer is held to the request's text (scripted upstream)", () => {
  let upstream: Awaited<ReturnType<typeof scriptedUpstream>>;
  let served: TestApp;
  beforeAll(async () => {
    upstream = await scriptedUpstream();
    served = await startTestApp({ UPSTREAM_BASE_URL: upstream.url });
  });
  afterAll(async () => {
    await served?.close();
    await upstream?.close();
  });

  async function routed() {
    const t = await tenant(served.database.db);
    await setRoute(served.database.db, t.tenantId, 'svc-workspace', 'upstream');
    return { ...t, client: clientFor(t, served.url) };
  }

  const Booking = z.object({ room: z.string(), hour: z.int().min(0).max(23), note: z.string().nullable() });
  /** Scripts the upstream's answer (with usage), and gives the request for a booking from `text`. */
  const booking = (text: string, answer: z.infer<typeof Booking>) => {
    upstream.load([{ content: JSON.stringify(answer), usage: { prompt_tokens: 40, completion_tokens: 12 } }]);
    return { model: 'svc-workspace', messages: user(text), response_format: zodResponseFormat(Booking, 'booking') };
  };

  it('refuses an answer whose required value the text does not state, naming the field; parse() surfaces it and the usage is kept', async () => {
    const t = await routed();
    // The upstream answers with a valid booking, but nothing in the text says 14.
    const completion = await t.client.chat.completions.parse(booking('Book room Atlas for the design review.', { room: 'Atlas', hour: 14, note: null }));
    expect(completion.choices[0]).toMatchObject({
      finish_reason: 'stop',
      message: {
        content: null,
        parsed: null,
        refusal: 'The provided text holds no value for the required field(s): hour. Nothing was guessed; add the information and ask again.',
      },
    });
    expect(completion.usage).toMatchObject({ prompt_tokens: 40, completion_tokens: 12 });
    const events = await (await ApiClient.connect(served.url)).get('/v1/journey-events', { key: t.key });
    expect(events.json.data[0]).toMatchObject({ kind: 'chat.refused', run_id: completion.id });
  });

  it('keeps the values the text states, and makes an invented optional (nullable) one null', async () => {
    const t = await routed();
    const completion = await t.client.chat.completions.parse(
      booking('Book room Atlas at 14 for the design review.', { room: 'Atlas', hour: 14, note: 'Bring snacks for everyone.' }),
    );
    expect(completion.choices[0]!.message.refusal).toBeNull();
    expect(completion.choices[0]!.message.parsed).toEqual({ room: 'Atlas', hour: 14, note: null });
  });

  it('the same streamed: the refusal is sent, never the invented value', async () => {
    const t = await routed();
    const stream = await t.client.chat.completions.create({
      ...booking('Book room Atlas for the design review.', { room: 'Atlas', hour: 14, note: null }),
      stream: true,
    });
    let content = '';
    let refusal = '';
    for await (const chunk of stream) {
      content += chunk.choices[0]?.delta?.content ?? '';
      refusal += chunk.choices[0]?.delta?.refusal ?? '';
    }
    expect(content).toBe('');
    expect(refusal).toContain('required field(s): hour.');
  });
});

describe('what the subset does not cover is 400 with param naming it', () => {
  const object = (properties: Json, extra: Json = {}) => ({
    type: 'object',
    properties,
    required: Object.keys(properties),
    additionalProperties: false,
    ...extra,
  });
  const param = (path: string) => `response_format.json_schema.schema${path}`;
  let deep: Json = { type: 'string' };
  for (let i = 0; i < 3; i++) deep = object({ x: deep });

  const cases: [string, Json, string][] = [
    ['pattern', object({ code: { type: 'string', pattern: '^[A-Z]+$' } }), param('.properties.code.pattern')],
    [
      'patternProperties in a $def',
      object({ home: { $ref: '#/$defs/Address' } }, { $defs: { Address: { type: 'object', patternProperties: { '^x': { type: 'string' } } } } }),
      param('.$defs.Address.patternProperties'),
    ],
    ['if / then', object({ a: { type: 'string' } }, { if: { required: ['a'] }, then: { required: [] } }), param('.if')],
    ['a remote $ref', object({ a: { $ref: 'https://example.com/schemas/a.json' } }), param('.properties.a.$ref')],
    [
      'a recursive $ref',
      object({ root: { $ref: '#/$defs/Node' } }, { $defs: { Node: object({ children: { type: 'array', items: { $ref: '#/$defs/Node' } } }) } }),
      param('.$defs.Node.properties.children.items.$ref'),
    ],
    [
      'depth 6 after resolving $ref',
      object({ a: object({ b: { $ref: '#/$defs/Deep' } }) }, { $defs: { Deep: object({ c: deep }) } }),
      param('.$defs.Deep.properties.c.properties.x.properties.x.properties.x'),
    ],
    ['65 properties', object(Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`p${i}`, { type: 'string' }]))), param('.properties')],
  ];

  it.each(cases)('%s', async (_name, schema, expected) => {
    const t = await tenant();
    const err = await clientFor(t)
      .chat.completions.create({ model: 'svc-workspace', messages: user('x'), response_format: { type: 'json_schema', json_schema: { name: 'p', schema } } })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.param).toBe(expected);
    expect(err.code).toBe('invalid_request');
  });

  it('the same through the raw API, the 400 body matching the contract', async () => {
    const t = await tenant();
    const res = await api.post(
      '/v1/chat/completions',
      { model: 'svc-workspace', messages: user('x'), response_format: { type: 'json_schema', json_schema: { name: 'p', schema: cases[0]![1] } } },
      { key: t.key },
    );
    expect(res.status).toBe(400);
    expect((res.json as { error: { param: string; message: string } }).error).toMatchObject({
      param: cases[0]![2],
      message: expect.stringContaining("unsupported JSON Schema keyword 'pattern'"),
    });
  });
});
