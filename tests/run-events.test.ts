// Live progress of runs (issue 12): GET /v1/agent-runs/{run_id}/events read over
// a real socket with eventsource-parser, against the real API, worker, Temporal
// dev server and Postgres; the run object's progress; and the journey and audit
// lists filtered by run_id with the runs' cursor pagination.
import http from 'node:http';
import Ajv2020 from 'ajv/dist/2020.js';
import { eq } from 'drizzle-orm';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { journeyEvents, runs } from '../db/schema.ts';
import { recordAudit } from '../services/audit.ts';
import { followRun, type RunEventSource } from '../services/run-events.ts';
import type { RunStatus } from '../domain/runs/states.ts';
import type { JourneyRow } from '../services/journey.ts';
import type { RunRow } from '../services/runs.ts';
import { ContractChecker } from './support/contract.ts';
import { isTerminal, newTenant, type RunStack, startRunStack, type TestTenant, waitForRun } from './support/run-stack.ts';
import { startTestApp } from './support/test-app.ts';
import { until } from './support/until.ts';

/** The keep-alive interval of this stack's streams (CHAT_KEEPALIVE_MS). */
const KEEP_ALIVE_MS = 200;

let stack: RunStack;
let db: RunStack['app']['database']['db'];
// `any`: the document is walked generically
let doc: any;
let contract: ContractChecker;
let validateRunEvent: (data: unknown) => boolean;

beforeAll(async () => {
  stack = await startRunStack({ CHAT_KEEPALIVE_MS: String(KEEP_ALIVE_MS) });
  db = stack.app.database.db;
  doc = await (await fetch(`${stack.app.url}/openapi.json`)).json();
  contract = new ContractChecker(doc);
  const ajv = new Ajv2020.default({ strict: false });
  ajv.addSchema(doc, 'openapi');
  validateRunEvent = ajv.compile({ $ref: 'openapi#/components/schemas/RunEvent' });
});
afterAll(async () => {
  await stack?.close();
});

// Runs to the end on the local provider and ends needs_attention (it prepares, performs no analysis).
const LOCAL_INPUT = 'Review the vendor terms for renewal risk; then list the three largest obligations.';
const EXTERNAL_INPUT = 'Summarise the incident timeline and tell the on-call channel that the incident is closed.';

async function createRun(t: TestTenant, input: string): Promise<string> {
  const created = await stack.api.post('/v1/agent-runs', { input }, { key: t.key });
  expect(created.status).toBe(201);
  return created.json.run_id;
}

interface EventData {
  id: string;
  kind: string;
  run_id: string;
  state: string;
  progress: {
    state: string;
    steps_done: number;
    steps_total: number;
    current_step: string | null;
    current_plan_step: string | null;
    waiting_for: string | null;
  };
  created_at: string;
}

interface OpenStream {
  status: number;
  headers: http.IncomingHttpHeaders;
  messages: EventSourceMessage[];
  /** When each message arrived. */
  receivedAt: number[];
  comments: string[];
  retry: number | null;
  /** Every byte received, in order. */
  raw: string;
  /** Resolves when the server ended the response (or the socket closed); the time it did. */
  closed: Promise<number>;
  data(): EventData[];
  /** Resolves once `predicate` holds over what was received. */
  until(predicate: (s: OpenStream) => boolean, timeoutMs?: number): Promise<void>;
  abort(): void;
}

/** Opens a stream over a real socket and parses it as it arrives; the answer's status and headers are checked against the document. */
function openStream(t: TestTenant, path: string, headers: Record<string, string> = {}, baseUrl = stack.app.url): Promise<OpenStream> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${baseUrl}${path}`, { headers: { authorization: `Bearer ${t.key}`, accept: 'text/event-stream', ...headers } }, (res) => {
      let endClosed: (at: number) => void;
      const stream: OpenStream = {
        status: res.statusCode!,
        headers: res.headers,
        messages: [],
        receivedAt: [],
        comments: [],
        retry: null,
        raw: '',
        closed: new Promise<number>((r) => (endClosed = r)),
        data: () => stream.messages.map((m) => JSON.parse(m.data) as EventData),
        async until(predicate, timeoutMs = 30_000) {
          const deadline = Date.now() + timeoutMs;
          while (!predicate(stream)) {
            if (Date.now() > deadline) throw new Error(`stream condition not met; received: ${stream.raw}`);
            await new Promise((r) => setTimeout(r, 20));
          }
        },
        abort: () => req.destroy(),
      };
      const parser = createParser({
        onEvent: (m) => {
          stream.messages.push(m);
          stream.receivedAt.push(Date.now());
        },
        onComment: (c) => stream.comments.push(c.trim()),
        onRetry: (ms) => (stream.retry = ms),
      });
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        stream.raw += chunk;
        parser.feed(chunk);
      });
      res.on('end', () => endClosed(Date.now()));
      res.on('close', () => endClosed(Date.now()));
      res.on('error', () => endClosed(Date.now()));
      contract.check('GET', path, { status: stream.status, headers: new Headers(res.headers as Record<string, string>), text: '', json: undefined });
      resolve(stream);
    });
    req.on('error', reject);
  });
}

const TERMINAL = ['completed', 'failed', 'needs_attention'];
const ids = (events: EventData[]) => events.map((e) => Number(e.id));
const isIncreasing = (xs: number[]) => xs.every((x, i) => i === 0 || x > xs[i - 1]!);

/** Each event as the stream framed it: `id:` and `event:` agree with its data, which is a valid RunEvent. */
function expectWellFormed(s: OpenStream, runId: string) {
  for (const m of s.messages) {
    const data = JSON.parse(m.data) as EventData;
    expect(validateRunEvent(data), `RunEvent ${m.data}`).toBe(true);
    expect(m.id).toBe(data.id);
    expect(m.event).toBe(data.kind);
    expect(data.run_id).toBe(runId);
    expect(data.progress.state).toBe(data.state);
    expect(Object.keys(data).sort()).toEqual(['created_at', 'id', 'kind', 'progress', 'run_id', 'state']);
  }
}

describe('GET /v1/agent-runs/{run_id}/events', () => {
  it("streams a running run's events in order, progress reaches steps_total, and it closes after the terminal event", async () => {
    const t = await newTenant(db);
    const marker = 'OKAPI-MARKER-5d2e';
    const runId = await createRun(t, `${LOCAL_INPUT} Mention ${marker}.`);
    const s = await openStream(t, `/v1/agent-runs/${runId}/events`);
    expect(s.status).toBe(200);
    expect(s.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(s.headers['cache-control']).toContain('no-cache');
    expect(s.headers['x-accel-buffering']).toBe('no');
    const closedAt = await s.closed;

    const events = s.data();
    expectWellFormed(s, runId);
    expect(s.retry).toBe(1_000);
    expect(s.raw).not.toContain(marker);
    expect(isIncreasing(ids(events))).toBe(true);
    expect(events[0]!.kind).toBe('run.accepted');
    expect(events.map((e) => e.state)).toContain('executing');
    const last = events[events.length - 1]!;
    expect(last).toMatchObject({ kind: 'run.needs_attention', state: 'needs_attention' });
    const run = await stack.api.get(`/v1/agent-runs/${runId}`, { key: t.key });
    const steps = run.json.plan.steps.length as number;
    expect(steps).toBe(3); // one analysis step per sentence
    expect(last.progress).toEqual({
      state: 'needs_attention',
      steps_done: steps,
      steps_total: steps,
      current_step: null,
      current_plan_step: null,
      waiting_for: null,
    });
    // Steps are counted as they finish, never backwards, and only the terminal event is terminal.
    const done = events.map((e) => e.progress.steps_done);
    expect(done.every((d, i) => i === 0 || d >= done[i - 1]!)).toBe(true);
    expect(events.filter((e) => e.kind === 'run.step_finished').map((e) => e.progress.steps_done)).toEqual([1, 2, 3]);
    expect(events.filter((e) => ['executing', 'verifying'].includes(e.state)).every((e) => e.progress.steps_total === steps)).toBe(true);
    expect(events.slice(0, -1).some((e) => TERMINAL.includes(e.state))).toBe(false);
    // The response ends right after the terminal event.
    expect(s.raw.trimEnd().endsWith(`data: ${JSON.stringify(last)}`)).toBe(true);
    expect(closedAt - s.receivedAt[s.receivedAt.length - 1]!).toBeLessThan(500);

    // The same events the journey list shows for the run, and the run shows the same progress.
    const listed = await stack.api.get(`/v1/journey-events?run_id=${runId}&limit=100`, { key: t.key });
    expect([...listed.json.data].reverse()).toEqual(events);
    expect(run.json.progress).toEqual(last.progress);
  });

  it('resumes after Last-Event-ID (header or last_event_id) with only later events; past the end it answers 204', async () => {
    const t = await newTenant(db);
    const runId = await createRun(t, LOCAL_INPUT);
    await waitForRun(stack.api, t.key, runId, isTerminal);
    const full = await openStream(t, `/v1/agent-runs/${runId}/events`);
    await full.closed;
    const all = full.data();
    expect(all.length).toBeGreaterThanOrEqual(5);

    const resumed = await openStream(t, `/v1/agent-runs/${runId}/events`, { 'last-event-id': all[2]!.id });
    await resumed.closed;
    expect(resumed.data()).toEqual(all.slice(3));
    const byQuery = await openStream(t, `/v1/agent-runs/${runId}/events?last_event_id=${all[4]!.id}`);
    await byQuery.closed;
    expect(byQuery.data()).toEqual(all.slice(5));
    // The header wins over the query.
    const both = await openStream(t, `/v1/agent-runs/${runId}/events?last_event_id=${all[0]!.id}`, { 'last-event-id': all[all.length - 2]!.id });
    await both.closed;
    expect(both.data()).toEqual(all.slice(-1));

    // Nothing after the terminal event of an ended run: 204, which stops EventSource reconnecting.
    for (const last of [all[all.length - 1]!.id, 'run_end']) {
      const ended = await stack.api.get(`/v1/agent-runs/${runId}/events`, { key: t.key, headers: { 'last-event-id': last } });
      expect(ended.status).toBe(204);
      expect(ended.text).toBe('');
    }
    for (const bad of ['abc', '-1', '1.5', '12345678901234567890']) {
      const r = await stack.api.get(`/v1/agent-runs/${runId}/events`, { key: t.key, headers: { 'last-event-id': bad } });
      expect(r.status).toBe(400);
      expect(r.json.error).toMatchObject({ code: 'invalid_request', param: 'last-event-id' });
    }
  });

  it('sends keep-alive comments while a run waits for approval, shows waiting_for approval, and follows it to its end', async () => {
    const t = await newTenant(db);
    const runId = await createRun(t, EXTERNAL_INPUT);
    const s = await openStream(t, `/v1/agent-runs/${runId}/events`);
    await s.until((x) => x.data().some((e) => e.state === 'awaiting_approval'));
    const waiting = s.data().find((e) => e.state === 'awaiting_approval')!;
    expect(waiting.progress).toMatchObject({ state: 'awaiting_approval', current_step: 'approval', waiting_for: 'approval', steps_done: 0 });
    expect(waiting.progress.steps_total).toBeGreaterThanOrEqual(2);
    const run = await stack.api.get(`/v1/agent-runs/${runId}`, { key: t.key });
    expect(run.json.progress).toMatchObject({ state: 'awaiting_approval', waiting_for: 'approval', steps_total: waiting.progress.steps_total });

    // Nothing happens while it waits: the stream stays open with a comment every KEEP_ALIVE_MS.
    const before = s.comments.length;
    await s.until((x) => x.comments.slice(before).filter((c) => c === 'keep-alive').length >= 3, KEEP_ALIVE_MS * 20);
    expect(s.data().at(-1)!.state).toBe('awaiting_approval');
    expect(s.raw).toContain(': keep-alive\n\n');

    const approved = await stack.api.post(`/v1/agent-runs/${runId}/approval`, { decision: 'reject', reason: 'not now' }, { key: t.approverKey });
    expect(approved.status).toBe(200);
    await s.closed;
    const events = s.data();
    expectWellFormed(s, runId);
    expect(isIncreasing(ids(events))).toBe(true);
    expect(events[events.length - 1]).toMatchObject({
      kind: 'run.failed',
      state: 'failed',
      progress: { state: 'failed', waiting_for: null, current_step: null },
    });
  });

  it('answers the same stream to Accept: text/event-stream on GET /v1/agent-runs/{run_id}, and JSON otherwise', async () => {
    const t = await newTenant(db);
    const runId = await createRun(t, LOCAL_INPUT);
    await waitForRun(stack.api, t.key, runId, isTerminal);
    const viaEvents = await openStream(t, `/v1/agent-runs/${runId}/events`);
    await viaEvents.closed;
    const viaRun = await openStream(t, `/v1/agent-runs/${runId}`);
    expect(viaRun.status).toBe(200);
    expect(viaRun.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(viaRun.headers.vary).toContain('Accept');
    await viaRun.closed;
    expect(viaRun.data()).toEqual(viaEvents.data());
    const resumed = await openStream(t, `/v1/agent-runs/${runId}`, { 'last-event-id': viaEvents.data()[1]!.id });
    await resumed.closed;
    expect(resumed.data()).toEqual(viaEvents.data().slice(2));

    const json = await stack.api.get(`/v1/agent-runs/${runId}`, { key: t.key, headers: { accept: 'application/json, text/event-stream' } });
    expect(json.headers.get('content-type')).toContain('application/json');
    expect(json.headers.get('vary')).toContain('Accept');
    expect(json.json.progress).toEqual({
      state: 'needs_attention',
      steps_done: 2,
      steps_total: 2,
      current_step: null,
      current_plan_step: null,
      waiting_for: null,
    });
  });

  it("answers 404 for an unknown run and for another tenant's run", async () => {
    const a = await newTenant(db);
    const b = await newTenant(db);
    const runId = await createRun(a, LOCAL_INPUT);
    for (const path of ['/v1/agent-runs/run_does_not_exist/events', `/v1/agent-runs/${runId}/events`]) {
      const r = await stack.api.get(path, { key: b.key, headers: { accept: 'text/event-stream' } });
      expect(r.status).toBe(404);
      expect(r.json.error.code).toBe('not_found');
    }
    const viaRun = await stack.api.get(`/v1/agent-runs/${runId}`, { key: b.key, headers: { accept: 'text/event-stream' } });
    expect(viaRun.status).toBe(404);
    expect((await stack.api.get(`/v1/agent-runs/${runId}/events`)).status).toBe(401);
    await waitForRun(stack.api, a.key, runId, isTerminal);
  });

  it('closes with a run_end event made from the run when retention purged its events', async () => {
    const t = await newTenant(db);
    const runId = await createRun(t, LOCAL_INPUT);
    const ended = await waitForRun(stack.api, t.key, runId, isTerminal);
    await db.delete(journeyEvents).where(eq(journeyEvents.runId, runId));
    // The stream waits out the grace a just-ended run gets for its terminal event (1 s), then closes.

    const s = await openStream(t, `/v1/agent-runs/${runId}/events`);
    await s.closed;
    expectWellFormed(s, runId);
    expect(s.data()).toEqual([
      { id: 'run_end', kind: 'run.needs_attention', run_id: runId, state: 'needs_attention', progress: ended.progress, created_at: ended.completed_at },
    ]);
    const after = await stack.api.get(`/v1/agent-runs/${runId}/events`, { key: t.key, headers: { 'last-event-id': 'run_end' } });
    expect(after.status).toBe(204);
  });

  it('ends open streams when the server shuts down, so it drains, telling the client to reconnect', async () => {
    const t = await newTenant(db);
    const runId = await createRun(t, EXTERNAL_INPUT);
    await waitForRun(stack.api, t.key, runId, (r) => r.status === 'awaiting_approval');
    const other = await startTestApp({ TASK_QUEUE: stack.taskQueue, CHAT_KEEPALIVE_MS: String(KEEP_ALIVE_MS) });
    const s = await openStream(t, `/v1/agent-runs/${runId}/events`, {}, other.url);
    await s.until((x) => x.data().some((e) => e.state === 'awaiting_approval'));
    const started = Date.now();
    await other.close();
    const closedAt = await s.closed;
    // test-app closes with a 1 s deadline: the stream ended itself, and its connection, well before they were forced.
    expect(closedAt - started).toBeLessThan(900);
    expect(Date.now() - started).toBeLessThan(900);
    expect(s.comments).toContain('server shutting down; reconnect with Last-Event-ID');
    await stack.api.post(`/v1/agent-runs/${runId}/cancel`, undefined, { key: t.key });
  });
});

/** A run's row as followRun reads it, executing. */
const executingRun = (id: string) =>
  ({
    id,
    status: 'executing',
    currentStep: 'execute',
    plan: null,
    result: null,
    progress: null,
    updatedAt: new Date(),
    completedAt: null,
  }) as unknown as RunRow;

describe("followRun (the stream's source)", () => {
  const baseRun = executingRun('run_x');

  it('stops reading once the client is gone (the signal aborts)', async () => {
    let reads = 0;
    const source: RunEventSource = {
      getRun: async () => baseRun,
      listJourneyEvents: async () => {
        reads += 1;
        return { rows: [], more: false };
      },
    };
    const controller = new AbortController();
    const events: unknown[] = [];
    const done = (async () => {
      for await (const e of followRun(source, 'ten_x', baseRun, 0, {
        pollMs: 10,
        maxPollMs: 20,
        terminalGraceMs: 0,
        maxFailures: 3,
        signal: controller.signal,
      }))
        events.push(e);
    })();
    await until(() => reads > 2, 'a few polls');
    controller.abort();
    await done; // the loop ended: nothing polls after the abort
    expect(events).toEqual([]);
  });

  it('backs off while nothing happens, and gives up after repeated failed reads', async () => {
    const at: number[] = [];
    const source: RunEventSource = {
      getRun: async () => baseRun,
      listJourneyEvents: async () => {
        at.push(Date.now());
        if (at.length > 4) throw new Error('database down');
        return { rows: [], more: false };
      },
    };
    const signal = new AbortController().signal;
    const consume = async () => {
      for await (const _ of followRun(source, 'ten_x', baseRun, 0, { pollMs: 20, maxPollMs: 80, terminalGraceMs: 0, maxFailures: 2, signal }));
    };
    await expect(consume()).rejects.toThrow('database down');
    const gaps = at.slice(1).map((x, i) => x - at[i]!);
    expect(gaps[0]).toBeGreaterThanOrEqual(35); // 20 doubled after an empty poll
    expect(gaps[2]).toBeGreaterThanOrEqual(75); // capped at 80
    expect(at).toHaveLength(6);
  });
});

describe('followers on the journey feed', () => {
  const baseRun = executingRun('run_f');
  const row = (id: number, state: RunStatus): JourneyRow => ({
    id,
    kind: `run.${state}`,
    runId: 'run_f',
    state,
    progress: { state, steps_done: 0, steps_total: 1, current_step: null, current_plan_step: null, waiting_for: null },
    createdAt: new Date(),
  });

  /** A feed whose events the test sends itself. */
  function manualFeed() {
    const listeners = new Set<(e: { run_id: string }) => void>();
    return {
      listening: async () => {},
      subscribe: (_tenant: string, l: (e: never) => void) => {
        listeners.add(l as (e: { run_id: string }) => void);
        return () => listeners.delete(l as (e: { run_id: string }) => void);
      },
      send: (runId: string) => {
        for (const l of listeners) l({ run_id: runId });
      },
      get size() {
        return listeners.size;
      },
    };
  }

  it("idle, 100 followers read once each and then not again; a change wakes only its run's followers, which read at once", async () => {
    const feed = manualFeed();
    const recorded: JourneyRow[] = [];
    let reads = 0;
    const source: RunEventSource = {
      getRun: async () => {
        reads += 1;
        return baseRun;
      },
      listJourneyEvents: async (_t, q) => {
        reads += 1;
        return { rows: recorded.filter((r) => r.id > (q.after ?? 0)), more: false };
      },
    };
    const controller = new AbortController();
    const seen: string[][] = Array.from({ length: 100 }, () => []);
    const followers = seen.map(async (events) => {
      for await (const e of followRun(source, 'ten_x', baseRun, 0, {
        pollMs: 10,
        maxPollMs: 20,
        terminalGraceMs: 0,
        maxFailures: 3,
        changes: feed as never,
        idleMs: 60_000,
        signal: controller.signal,
      }))
        events.push(e.state);
    });
    await until(() => reads >= 200, 'every follower read once'); // the events, then the run's row
    await new Promise((r) => setTimeout(r, 300));
    expect(reads).toBe(200); // polling would have read again every 10–20 ms
    feed.send('run_other');
    await new Promise((r) => setTimeout(r, 100));
    expect(reads).toBe(200);
    recorded.push(row(1, 'completed'));
    const woken = Date.now();
    feed.send('run_f');
    await Promise.all(followers);
    expect(Date.now() - woken).toBeLessThan(1_000);
    expect(seen.every((events) => events.join() === 'completed')).toBe(true);
    expect(feed.size).toBe(0); // each follower unsubscribed when it ended
    controller.abort();
  });
});

describe('stream caps', () => {
  it('answers 429 with Retry-After beyond the per-key cap and 503 beyond the per-process cap; a closed stream frees its slot', async () => {
    const capped = await startTestApp({ STREAMS_PER_KEY: '2', STREAMS_PER_PROCESS: '3' });
    try {
      const a = await newTenant(capped.database.db);
      const b = await newTenant(capped.database.db);
      const open = (key: string) => {
        const controller = new AbortController();
        const response = fetch(`${capped.url}/v1/agent-runs/events`, { headers: { authorization: `Bearer ${key}` }, signal: controller.signal });
        return { response, close: () => controller.abort() };
      };
      const first = open(a.key);
      const second = open(a.key);
      expect((await first.response).status).toBe(200);
      expect((await second.response).status).toBe(200);
      const third = await open(a.key).response;
      expect(third.status).toBe(429);
      expect(third.headers.get('retry-after')).toBe('5');
      expect(((await third.json()) as { error: { code: string } }).error.code).toBe('rate_limit_exceeded');
      const otherKey = open(b.key);
      expect((await otherKey.response).status).toBe(200);
      const full = await open(b.key).response;
      expect(full.status).toBe(503);
      expect(full.headers.get('retry-after')).toBe('5');
      first.close();
      await until(async () => (await open(b.key).response).status === 200, 'a slot freed by the closed stream');
      second.close();
      otherKey.close();
    } finally {
      await capped.close();
    }
  });
});

describe('journey and audit lists by run, with cursor pagination', () => {
  async function pageThrough(t: TestTenant, path: string, sep = '&') {
    const seen: { id: string }[] = [];
    const pages: { has_more: boolean; next_cursor: string | null }[] = [];
    let cursor: string | null = null;
    do {
      const r = await stack.api.get(`${path}${sep}limit=1${cursor ? `&cursor=${cursor}` : ''}`, { key: t.key });
      expect(r.status).toBe(200);
      expect(r.json.data).toHaveLength(1);
      seen.push(...r.json.data);
      pages.push({ has_more: r.json.has_more, next_cursor: r.json.next_cursor });
      cursor = r.json.next_cursor;
    } while (cursor);
    return { seen, pages };
  }

  it("GET /v1/journey-events?run_id= lists one run's events, page by page", async () => {
    const t = await newTenant(db);
    const runId = await createRun(t, LOCAL_INPUT);
    const otherRun = await createRun(t, 'Summarise the quarterly numbers. Revenue rose 4%.');
    await waitForRun(stack.api, t.key, runId, isTerminal);
    await waitForRun(stack.api, t.key, otherRun, isTerminal);

    const whole = await stack.api.get(`/v1/journey-events?run_id=${runId}&limit=100`, { key: t.key });
    expect(whole.json).toMatchObject({ object: 'list', has_more: false, next_cursor: null });
    const events = whole.json.data as EventData[];
    expect(events.length).toBeGreaterThanOrEqual(3);
    expect(new Set(events.map((e) => e.run_id))).toEqual(new Set([runId]));
    expect(isIncreasing(ids(events).reverse())).toBe(true); // newest first
    expect(events[0]).toMatchObject({ kind: 'run.needs_attention', progress: { state: 'needs_attention', steps_done: 2, steps_total: 2 } });

    const { seen, pages } = await pageThrough(t, `/v1/journey-events?run_id=${runId}`);
    expect(seen).toEqual(events);
    expect(pages.slice(0, -1).every((p) => p.has_more && typeof p.next_cursor === 'string')).toBe(true);
    expect(pages[pages.length - 1]).toEqual({ has_more: false, next_cursor: null });

    // Without run_id: the tenant's events of both runs, paged the same way.
    const tenantWide = await stack.api.get('/v1/journey-events?limit=100', { key: t.key });
    expect(new Set(tenantWide.json.data.map((e: EventData) => e.run_id))).toEqual(new Set([runId, otherRun]));
    const twoPages = await stack.api.get(`/v1/journey-events?limit=${events.length}`, { key: t.key });
    expect(twoPages.json.has_more).toBe(true);
    const rest = await stack.api.get(`/v1/journey-events?limit=100&cursor=${twoPages.json.next_cursor}`, { key: t.key });
    expect([...twoPages.json.data, ...rest.json.data]).toEqual(tenantWide.json.data);

    // A run that is not the tenant's (or does not exist) is an empty list, not a 404.
    const stranger = await newTenant(db);
    const r = await stack.api.get(`/v1/journey-events?run_id=${runId}`, { key: stranger.key });
    expect(r.json).toEqual({ object: 'list', data: [], has_more: false, next_cursor: null });
    expect((await stack.api.get('/v1/journey-events?run_id=run_nope', { key: t.key })).json.data).toEqual([]);
  });

  it('derives the same progress for runs and events recorded before progress was', async () => {
    const t = await newTenant(db);
    const runId = await createRun(t, EXTERNAL_INPUT);
    await waitForRun(stack.api, t.key, runId, (r) => r.status === 'awaiting_approval');
    const read = async () => ({
      run: (await stack.api.get(`/v1/agent-runs/${runId}`, { key: t.key })).json.progress,
      events: (await stack.api.get(`/v1/journey-events?run_id=${runId}&limit=100`, { key: t.key })).json.data as EventData[],
    });
    const check = async () => {
      const recorded = await read();
      await db.update(runs).set({ progress: null }).where(eq(runs.id, runId));
      await db.update(journeyEvents).set({ progress: null }).where(eq(journeyEvents.runId, runId));
      const derived = await read();
      expect(derived.run).toEqual(recorded.run);
      // The plan step being run is not known afterwards; everything else is.
      const withoutPlanStep = (events: EventData[]) => events.map((e) => ({ ...e, progress: { ...e.progress, current_plan_step: null } }));
      expect(derived.events).toEqual(withoutPlanStep(recorded.events));
      return derived;
    };
    const waiting = await check();
    expect(waiting.run).toMatchObject({ state: 'awaiting_approval', waiting_for: 'approval', current_step: 'approval', steps_done: 0 });
    expect((await stack.api.post(`/v1/agent-runs/${runId}/approval`, { decision: 'approve' }, { key: t.approverKey })).status).toBe(200);
    await waitForRun(stack.api, t.key, runId, isTerminal);
    const ended = await check();
    expect(ended.run.steps_done).toBe(ended.run.steps_total);
    expect(ended.events.filter((e) => e.kind === 'run.step_finished').map((e) => e.progress.steps_done)).toEqual([2, 1]); // newest first
  });

  it('GET /v1/audit-events?run_id= lists the receipts whose target is the run, page by page', async () => {
    const t = await newTenant(db);
    const runId = await createRun(t, EXTERNAL_INPUT);
    await waitForRun(stack.api, t.key, runId, (r) => r.status === 'awaiting_approval');
    expect((await stack.api.post(`/v1/agent-runs/${runId}/approval`, { decision: 'reject' }, { key: t.approverKey })).status).toBe(200);
    // Two more receipts on the run, and one on something else.
    await recordAudit(db, { tenantId: t.tenantId, keyId: null, action: 'run.note.one', target: `run:${runId}`, subject: { n: 1 } });
    await recordAudit(db, { tenantId: t.tenantId, keyId: null, action: 'budget.upsert', target: 'budget:b1', subject: { n: 2 } });
    await recordAudit(db, { tenantId: t.tenantId, keyId: null, action: 'run.note.two', target: `run:${runId}`, subject: { n: 3 } });

    const whole = await stack.api.get(`/v1/audit-events?run_id=${runId}`, { key: t.key });
    expect(whole.json.has_more).toBe(false);
    expect(whole.json.data.map((e: { action: string }) => e.action)).toEqual(['run.note.two', 'run.note.one', 'run.approval.reject']);
    expect(new Set(whole.json.data.map((e: { target: string }) => e.target))).toEqual(new Set([`run:${runId}`]));

    const { seen, pages } = await pageThrough(t, `/v1/audit-events?run_id=${runId}`);
    expect(seen).toEqual(whole.json.data);
    expect(pages.map((p) => p.has_more)).toEqual([true, true, false]);
    expect(pages[2]!.next_cursor).toBeNull();

    const all = await stack.api.get('/v1/audit-events', { key: t.key });
    expect(all.json.data.map((e: { action: string }) => e.action)).toEqual(['run.note.two', 'budget.upsert', 'run.note.one', 'run.approval.reject']);
    expect((await stack.api.get('/v1/audit-events?run_id=run_nope', { key: t.key })).json).toEqual({
      object: 'list',
      data: [],
      has_more: false,
      next_cursor: null,
    });
  });

  it('refuses a bad run_id, cursor or limit with 400, decided before the database', async () => {
    const t = await newTenant(db);
    const runsCursor = Buffer.from(JSON.stringify({ t: new Date().toISOString(), id: 'run_abc' })).toString('base64url');
    for (const path of ['/v1/journey-events', '/v1/audit-events']) {
      const long = await stack.api.get(`${path}?run_id=${'r'.repeat(65)}`, { key: t.key });
      expect(long.status).toBe(400);
      expect(long.json.error.param).toBe('run_id');
      for (const cursor of [
        'not-a-cursor',
        runsCursor,
        Buffer.from(JSON.stringify({ t: new Date().toISOString(), id: '99999999999999999' })).toString('base64url'),
      ]) {
        const r = await stack.api.get(`${path}?cursor=${cursor}`, { key: t.key });
        expect(r.status).toBe(400);
        expect(r.json.error).toMatchObject({ code: 'invalid_cursor', param: 'cursor' });
      }
      for (const bad of ['0', '101']) expect((await stack.api.get(`${path}?limit=${bad}`, { key: t.key })).status).toBe(400);
    }
  });
});
