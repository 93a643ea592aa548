// Tools in the OpenAI wire format (issue 13): the official `openai` npm client
// against the real server. `svc-workspace` is routed to a scripted
// OpenAI-compatible upstream (tests/support/fake-servers.ts), which calls
// tools; `svc-workspace-fast` stays on the local provider, which cannot.
import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import OpenAI from 'openai';
import { zodFunction } from 'openai/helpers/zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ledgerEntries, ledgerHolds } from '../db/schema.ts';
import { createKey } from '../services/keys.ts';
import { grantCredits } from '../services/ledger.ts';
import { setRoute } from '../services/routing.ts';
import { ApiClient } from './support/client.ts';
import { scriptedUpstream } from './support/fake-servers.ts';
import { startTestApp, type TestApp } from './support/test-app.ts';

let app: TestApp;
let api: ApiClient;
let upstream: Awaited<ReturnType<typeof scriptedUpstream>>;

interface Tenant {
  tenantId: string;
  key: string;
}

beforeAll(async () => {
  upstream = await scriptedUpstream();
  app = await startTestApp({ UPSTREAM_BASE_URL: upstream.url, UPSTREAM_MODEL_MAP: '{"svc-workspace":"tiny-model"}' });
  api = await ApiClient.connect(app.url);
});
afterAll(async () => {
  await app.close();
  await upstream.close();
});

/** A tenant with credits whose svc-workspace goes to the upstream (svc-workspace-fast stays local). */
async function tenant(): Promise<Tenant> {
  const db = app.database.db;
  const k = await createKey(db, { tenant: `tools-${randomBytes(5).toString('hex')}`, kind: 'core' });
  await grantCredits(db, { tenantId: k.tenantId, amount: 100_000, entryKey: `g-${k.id}` });
  await setRoute(db, k.tenantId, 'svc-workspace', 'upstream');
  return { tenantId: k.tenantId, key: k.secret };
}

const clientFor = (t: Tenant) => new OpenAI({ apiKey: t.key, baseURL: `${app.url}/v1`, maxRetries: 0 });

const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Current weather of a city.',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
    strict: true,
  },
};
const timeTool = {
  type: 'function' as const,
  function: {
    name: 'get_time',
    description: 'Local time of a city.',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};
const tools = [weatherTool, timeTool];
const question = { role: 'user' as const, content: 'What is the weather in Reykjavik right now?' };
const holdsOf = (t: Tenant) => app.database.db.select().from(ledgerHolds).where(eq(ledgerHolds.tenantId, t.tenantId));

describe('tools routed to an upstream', () => {
  it('(a) returns the upstream tool call, finish_reason tool_calls, and passes tools, tool_choice and parallel_tool_calls on unchanged', async () => {
    const t = await tenant();
    upstream.load([
      { tool_calls: [{ id: 'call_w1', name: 'get_weather', arguments: { city: 'Reykjavik' } }], usage: { prompt_tokens: 61, completion_tokens: 17 } },
    ]);
    const completion = await clientFor(t).chat.completions.create({
      model: 'svc-workspace',
      messages: [question],
      tools,
      tool_choice: 'auto',
      parallel_tool_calls: false,
    });
    const choice = completion.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBeNull();
    expect(choice.message.tool_calls).toEqual([{ id: 'call_w1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Reykjavik"}' } }]);
    const call = choice.message.tool_calls![0]!;
    expect(call.type === 'function' && JSON.parse(call.function.arguments)).toEqual({ city: 'Reykjavik' });
    expect(completion.usage).toEqual({ prompt_tokens: 61, completion_tokens: 17, total_tokens: 78 });

    const sent = upstream.seen[0]!.body;
    expect(sent.model).toBe('tiny-model');
    expect(sent.tools).toEqual(tools);
    expect(sent.tool_choice).toBe('auto');
    expect(sent.parallel_tool_calls).toBe(false);
    expect(sent.messages).toEqual([question]);

    // Billed by the upstream's usage through the ledger; the journey event is content-free.
    const [hold] = await app.database.db.select().from(ledgerHolds).where(eq(ledgerHolds.runId, completion.id));
    expect(hold).toMatchObject({ status: 'settled', step: 'chat' });
    const charges = await app.database.db.select().from(ledgerEntries).where(eq(ledgerEntries.runId, completion.id));
    expect(charges.map((c) => c.amount)).toEqual([Math.ceil((78 * 2) / 1000)]);
    const events = await api.get('/v1/journey-events', { key: t.key });
    expect(events.json.data[0]).toMatchObject({ kind: 'chat.completed', run_id: completion.id, state: 'tool_calls' });
    expect(events.text).not.toMatch(/Reykjavik|get_weather/);
  });

  it('(b) streams tool-call deltas as OpenAI does, and the stream helper reassembles the calls', async () => {
    const t = await tenant();
    const client = clientFor(t);
    upstream.load([{ tool_calls: [{ id: 'call_s1', name: 'get_weather', arguments: { city: 'Reykjavik', units: 'metric' } }] }]);
    const stream = await client.chat.completions.create({
      model: 'svc-workspace',
      messages: [question],
      tools,
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      stream: true,
      stream_options: { include_usage: true },
    });
    const deltas: OpenAI.Chat.Completions.ChatCompletionChunk.Choice.Delta.ToolCall[] = [];
    const finishes: (string | null)[] = [];
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      if (choice) finishes.push(choice.finish_reason);
      deltas.push(...(choice?.delta.tool_calls ?? []));
      if (chunk.usage) usage = chunk.usage;
    }
    // First the call's id, type and name (arguments ''), then argument fragments only.
    expect(deltas[0]).toEqual({ index: 0, id: 'call_s1', type: 'function', function: { name: 'get_weather', arguments: '' } });
    const fragments = deltas.slice(1);
    expect(fragments.length).toBe(3);
    for (const d of fragments) expect(Object.keys(d).sort()).toEqual(['function', 'index']);
    expect(fragments.map((d) => d.function!.arguments).join('')).toBe('{"city":"Reykjavik","units":"metric"}');
    expect(finishes.at(-1)).toBe('tool_calls');
    expect(finishes.slice(0, -1).every((f) => f === null)).toBe(true);
    // The stream asked the upstream for its usage, and the answer carries what it reported.
    expect(usage).toMatchObject({ prompt_tokens: 100, completion_tokens: 20 });
    const sent = upstream.seen[0]!.body;
    expect(sent.stream).toBe(true);
    expect(sent.tool_choice).toEqual({ type: 'function', function: { name: 'get_weather' } });

    // Two calls in one turn, through the .stream() helper.
    upstream.load([
      {
        tool_calls: [
          { id: 'call_p1', name: 'get_weather', arguments: { city: 'Oslo' } },
          { id: 'call_p2', name: 'get_time', arguments: { city: 'Oslo' } },
        ],
      },
    ]);
    const runner = client.chat.completions.stream({ model: 'svc-workspace', messages: [question], tools, parallel_tool_calls: true });
    const argumentDeltas: string[] = [];
    runner.on('tool_calls.function.arguments.delta', (e) => argumentDeltas.push(e.arguments_delta));
    const final = await runner.finalChatCompletion();
    expect(final.choices[0]!.finish_reason).toBe('tool_calls');
    expect(final.choices[0]!.message.tool_calls!.map((c) => c.type === 'function' && [c.id, c.function.name, JSON.parse(c.function.arguments)])).toEqual([
      ['call_p1', 'get_weather', { city: 'Oslo' }],
      ['call_p2', 'get_time', { city: 'Oslo' }],
    ]);
    // Per call: the '' of its first delta, then three fragments.
    expect(argumentDeltas.filter(Boolean)).toHaveLength(6);
    expect(argumentDeltas.join('')).toBe('{"city":"Oslo"}{"city":"Oslo"}');
    expect(upstream.seen[0]!.body.parallel_tool_calls).toBe(true);
    const events = await api.get('/v1/journey-events', { key: t.key });
    expect(events.json.data.map((e: { state: string }) => e.state)).toEqual(['tool_calls', 'tool_calls']);
  });

  it('(c) passes a follow-up with the assistant tool_calls turn and the tool result on, and returns the text answer', async () => {
    const t = await tenant();
    const client = clientFor(t);
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
      question,
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_w1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Reykjavik"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_w1', content: '{"temp_c":4,"sky":"overcast"}' },
    ];
    upstream.load([{ content: 'It is 4 °C and overcast in Reykjavik.' }]);
    const answer = await client.chat.completions.create({ model: 'svc-workspace', messages, tools });
    expect(answer.choices[0]!.message.content).toBe('It is 4 °C and overcast in Reykjavik.');
    expect(answer.choices[0]!.message.tool_calls).toBeUndefined();
    expect(answer.choices[0]!.finish_reason).toBe('stop');
    expect(upstream.seen[0]!.body.messages).toEqual([
      question,
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_w1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Reykjavik"}' } }],
      },
      { role: 'tool', content: '{"temp_c":4,"sky":"overcast"}', tool_call_id: 'call_w1' },
    ]);

    // The same, streamed: text deltas and finish_reason stop.
    upstream.load([{ content: 'It is 4 °C and overcast in Reykjavik.' }]);
    const streamed = await client.chat.completions.stream({ model: 'svc-workspace', messages, tools }).finalChatCompletion();
    expect(streamed.choices[0]!.message.content).toBe('It is 4 °C and overcast in Reykjavik.');
    expect(streamed.choices[0]!.finish_reason).toBe('stop');
  });

  it('(f) runs a whole tool loop with runTools, and parses zodFunction arguments', async () => {
    const t = await tenant();
    const client = clientFor(t);
    upstream.load([{ tool_calls: [{ name: 'get_weather', arguments: { city: 'Reykjavik' } }] }, { content: 'Overcast, 4 °C.' }]);
    const seenArgs: unknown[] = [];
    const runner = client.chat.completions.runTools({
      model: 'svc-workspace',
      messages: [question],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: weatherTool.function.description,
            parameters: weatherTool.function.parameters,
            parse: JSON.parse,
            function: (args: { city: string }) => {
              seenArgs.push(args);
              return { temp_c: 4, sky: 'overcast' };
            },
          },
        },
      ],
    });
    expect(await runner.finalContent()).toBe('Overcast, 4 °C.');
    expect(seenArgs).toEqual([{ city: 'Reykjavik' }]);
    const followUp = upstream.seen[1]!.body.messages;
    expect(followUp.at(-1)).toEqual({ role: 'tool', content: '{"temp_c":4,"sky":"overcast"}', tool_call_id: followUp.at(-2).tool_calls[0].id });

    upstream.load([{ tool_calls: [{ name: 'get_weather', arguments: { city: 'Reykjavik' } }] }]);
    const parsed = await client.chat.completions.parse({
      model: 'svc-workspace',
      messages: [question],
      tools: [zodFunction({ name: 'get_weather', parameters: z.object({ city: z.string() }) })],
    });
    const call = parsed.choices[0]!.message.tool_calls![0]!;
    expect(call.function.parsed_arguments).toEqual({ city: 'Reykjavik' });
    expect(upstream.seen[0]!.body.tools![0].function).toMatchObject({ name: 'get_weather', strict: true, parameters: { type: 'object', required: ['city'] } });
  });
});

describe('the local provider', () => {
  it('(d) refuses tools with the documented 400, holding and sending nothing; with tool_choice "none" it answers in text', async () => {
    const t = await tenant();
    const client = clientFor(t);
    upstream.load([]);
    for (const stream of [false, true]) {
      const err = await client.chat.completions.create({ model: 'svc-workspace-fast', messages: [question], tools, stream }).catch((e) => e);
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      expect(err.code).toBe('tools_not_supported');
      expect(err.param).toBe('tools');
      expect(err.type).toBe('invalid_request_error');
      expect(err.message).toContain("The model 'svc-workspace-fast' cannot call tools");
      expect(err.message).toContain('POST /v1/routing-policies');
      expect(err.message).toContain('tool_choice "none"');
    }
    const named = await client.chat.completions
      .create({ model: 'svc-workspace-fast', messages: [question], tools, tool_choice: { type: 'function', function: { name: 'get_time' } } })
      .catch((e) => e);
    expect(named.code).toBe('tools_not_supported');
    expect(await holdsOf(t)).toEqual([]);
    expect(upstream.seen).toEqual([]);

    const plain = await client.chat.completions.create({ model: 'svc-workspace-fast', messages: [question] });
    const none = await client.chat.completions.create({ model: 'svc-workspace-fast', messages: [question], tools, tool_choice: 'none' });
    expect(none.choices[0]!.finish_reason).toBe('stop');
    expect(none.choices[0]!.message.tool_calls).toBeUndefined();
    expect(none.choices[0]!.message.content).toBe(plain.choices[0]!.message.content);
    // The tools were not read, so not counted either.
    expect(none.usage).toEqual(plain.usage);

    // Tool calls and results in the history are read past: the answer is to the last user message.
    const ferry = { role: 'user' as const, content: 'Summarise the ferry timetable for Heimaey.' };
    const alone = await client.chat.completions.create({ model: 'svc-workspace-fast', messages: [ferry] });
    const history = await client.chat.completions.create({
      model: 'svc-workspace-fast',
      messages: [
        question,
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_h1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Reykjavik"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_h1', content: '{"temp_c":4}' },
        ferry,
      ],
    });
    expect(history.choices[0]!.message.content).toBe(alone.choices[0]!.message.content);
    expect(history.choices[0]!.finish_reason).toBe('stop');
    expect(upstream.seen).toEqual([]);
  });
});

describe('validation in the contract', () => {
  it('(e) answers 400 naming the field, before the upstream or the ledger sees anything', async () => {
    const t = await tenant();
    upstream.load([]);
    const unknown = await clientFor(t)
      .chat.completions.create({ model: 'svc-workspace', messages: [question], tools, tool_choice: { type: 'function', function: { name: 'get_tide' } } })
      .catch((e) => e);
    expect(unknown).toBeInstanceOf(OpenAI.BadRequestError);
    expect(unknown.param).toBe('tool_choice');
    expect(unknown.code).toBe('invalid_request');

    const call = { id: 'call_v1', type: 'function', function: { name: 'get_weather', arguments: '{}' } };
    const cases: [object, string, string][] = [
      [{ tool_choice: 'required', messages: [question] }, 'tool_choice', 'invalid_request'],
      [{ tool_choice: 'sometimes', messages: [question] }, 'tool_choice', 'invalid_request'],
      [{ tools: [{ type: 'function', function: { name: 'get weather' } }], messages: [question] }, 'tools[0].function.name', 'invalid_request'],
      [{ tools: [weatherTool, weatherTool], messages: [question] }, 'tools[1].function.name', 'invalid_request'],
      [{ tools: [{ type: 'custom', custom: { name: 'x' } }], messages: [question] }, 'tools[0].type', 'invalid_request'],
      [
        { tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'string' } } }], messages: [question] },
        'tools[0].function.parameters.type',
        'invalid_request',
      ],
      [
        { tools: [{ type: 'function', function: { name: 'f', parameters: { description: 'x'.repeat(17_000) } } }], messages: [question] },
        'tools[0].function.parameters',
        'invalid_request',
      ],
      [{ tools: [{ type: 'function', function: { name: 'f', examples: [] } }], messages: [question] }, 'tools[0].function.examples', 'unsupported_parameter'],
      [{ tools: Array.from({ length: 129 }, (_, i) => ({ type: 'function', function: { name: `f${i}` } })), messages: [question] }, 'tools', 'invalid_request'],
      [{ tools, parallel_tool_calls: 'yes', messages: [question] }, 'parallel_tool_calls', 'invalid_request'],
      [{ functions: [weatherTool.function], messages: [question] }, 'functions', 'unsupported_parameter'],
      [{ function_call: 'auto', messages: [question] }, 'function_call', 'unsupported_parameter'],
      [
        { messages: [question, { role: 'assistant', content: null, tool_calls: [call] }, { role: 'tool', content: '{}' }] },
        'messages[2].tool_call_id',
        'invalid_request',
      ],
      [
        { messages: [question, { role: 'assistant', content: null, tool_calls: [call] }, { role: 'tool', tool_call_id: 'call_other', content: '{}' }] },
        'messages[2].tool_call_id',
        'invalid_request',
      ],
      [{ messages: [question, { role: 'tool', tool_call_id: 'call_v1', content: '{}' }] }, 'messages[1].tool_call_id', 'invalid_request'],
      [{ messages: [question, { role: 'assistant', content: null, tool_calls: [call] }, question] }, 'messages[1].tool_calls', 'invalid_request'],
      [{ messages: [question, { role: 'assistant', content: null, tool_calls: [call] }] }, 'messages[1].tool_calls', 'invalid_request'],
      [{ messages: [{ ...question, tool_calls: [call] }] }, 'messages[0].tool_calls', 'invalid_request'],
      [
        {
          messages: [
            question,
            { role: 'assistant', content: null, tool_calls: [{ ...call, type: 'custom' }] },
            { role: 'tool', tool_call_id: 'call_v1', content: '{}' },
          ],
        },
        'messages[1].tool_calls[0].type',
        'invalid_request',
      ],
    ];
    for (const [body, param, code] of cases) {
      const res = await api.post('/v1/chat/completions', { model: 'svc-workspace', ...body }, { key: t.key });
      expect([res.status, res.json.error.param, res.json.error.code], JSON.stringify(body).slice(0, 200)).toEqual([400, param, code]);
    }
    expect(upstream.seen).toEqual([]);
    expect(await holdsOf(t)).toEqual([]);
  });
});
