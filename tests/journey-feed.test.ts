// The process's one reader of the journey table (services/journey-feed.ts) against real Postgres, and
// the tenant-level stream that serves from it (GET /v1/agent-runs/events) over a real socket.
import { randomBytes } from 'node:crypto';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { journeyFeed } from '../services/journey-feed.ts';
import { recordJourneyEvent } from '../services/journey.ts';
import type { RunEvent } from '../services/run-events.ts';
import { newTenant } from './support/run-stack.ts';
import { startTestApp, type TestApp } from './support/test-app.ts';
import { until } from './support/until.ts';

let app: TestApp;
const db = () => app.database.db;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

const progress = (state: string) => ({ state, steps_done: 0, steps_total: 1, current_step: 'approval', current_plan_step: null, waiting_for: null });
const runEvent = (tenantId: string, runId: string, state = 'awaiting_approval') => ({
  tenantId,
  runId,
  kind: `run.${state}`,
  state,
  progress: progress(state),
  eventKey: `test:${randomBytes(8).toString('hex')}`,
});

/** Takes a journey event id for the run in an open transaction of `client`, committed when the test says. */
async function beginUncommitted(client: pg.Client, tenantId: string, runId: string) {
  await client.query('begin');
  await client.query(`insert into journey_events (tenant_id, run_id, kind, state, progress, event_key) values ($1, $2, 'run.planning', 'planning', $3, $4)`, [
    tenantId,
    runId,
    JSON.stringify(progress('planning')),
    `test:${randomBytes(8).toString('hex')}`,
  ]);
}

describe('the journey feed', () => {
  it("hands each tenant's run events to that tenant's listeners only, in order, each once", async () => {
    const a = await newTenant(db(), 0);
    const b = await newTenant(db(), 0);
    const feed = journeyFeed(db(), { pollMs: 20 });
    const seenA: RunEvent[] = [];
    const seenB: RunEvent[] = [];
    const stopA = feed.subscribe(a.tenantId, (e) => seenA.push(e));
    const stopB = feed.subscribe(b.tenantId, (e) => seenB.push(e));
    try {
      expect(feed.size).toBe(2);
      // The feed sends what is recorded once it is listening.
      await feed.listening();
      await recordJourneyEvent(db(), runEvent(a.tenantId, 'run_a1', 'planning'));
      await recordJourneyEvent(db(), runEvent(b.tenantId, 'run_b1'));
      await recordJourneyEvent(db(), runEvent(a.tenantId, 'run_a1', 'awaiting_approval'));
      await until(() => seenA.length === 2 && seenB.length === 1, 'the events');
      expect(seenA.map((e) => [e.run_id, e.state])).toEqual([
        ['run_a1', 'planning'],
        ['run_a1', 'awaiting_approval'],
      ]);
      expect(seenB.map((e) => e.run_id)).toEqual(['run_b1']);
      // Re-read for the lookback window, never sent again.
      await new Promise((r) => setTimeout(r, 200));
      expect(seenA).toHaveLength(2);
    } finally {
      stopA();
      stopB();
      feed.close();
    }
    expect(feed.size).toBe(0);
  });

  it('sends every event when more than a page of them fall within the lookback window', async () => {
    const t = await newTenant(db(), 0);
    const feed = journeyFeed(db(), { pollMs: 20, lookbackMs: 60_000, page: 5 });
    const seen: string[] = [];
    const stop = feed.subscribe(t.tenantId, (e) => seen.push(e.run_id));
    try {
      await feed.listening();
      for (let i = 0; i < 17; i++) await recordJourneyEvent(db(), runEvent(t.tenantId, `run_page_${i}`));
      await until(() => seen.length === 17, 'all 17 events, 5 to a page');
      await new Promise((r) => setTimeout(r, 200));
      expect(seen).toEqual(Array.from({ length: 17 }, (_, i) => `run_page_${i}`));
    } finally {
      stop();
      feed.close();
    }
  });

  it('still sends an event whose transaction commits after a later event was read', async () => {
    const t = await newTenant(db(), 0);
    const feed = journeyFeed(db(), { pollMs: 20, lookbackMs: 5_000 });
    const seen: string[] = [];
    const stop = feed.subscribe(t.tenantId, (e) => seen.push(e.run_id));
    const slow = new pg.Client({ connectionString: inject('databaseUrl') });
    await slow.connect();
    try {
      await feed.listening();
      // The slow writer takes its id first and commits last.
      await beginUncommitted(slow, t.tenantId, 'run_slow');
      await recordJourneyEvent(db(), runEvent(t.tenantId, 'run_fast'));
      await until(() => seen.includes('run_fast'), 'the later event');
      await slow.query('commit');
      await until(() => seen.includes('run_slow'), 'the event committed late');
      await new Promise((r) => setTimeout(r, 200));
      expect(seen.sort()).toEqual(['run_fast', 'run_slow']);
    } finally {
      stop();
      feed.close();
      await slow.end();
    }
  });

  it('starting, sends what commits once it listens, an id taken before it started included, and nothing committed before', async () => {
    const t = await newTenant(db(), 0);
    const slow = new pg.Client({ connectionString: inject('databaseUrl') });
    await slow.connect();
    const feed = journeyFeed(db(), { pollMs: 20, lookbackMs: 5_000 });
    const seen: string[] = [];
    let stop = () => {};
    try {
      // Before the feed starts: one writer holds an id it has not committed; a later id commits.
      await beginUncommitted(slow, t.tenantId, 'run_held');
      await recordJourneyEvent(db(), runEvent(t.tenantId, 'run_before'));
      stop = feed.subscribe(t.tenantId, (e) => seen.push(e.run_id));
      await feed.listening();
      await recordJourneyEvent(db(), runEvent(t.tenantId, 'run_after'));
      await slow.query('commit');
      await until(() => seen.includes('run_after') && seen.includes('run_held'), 'the events committed once it listened');
      await new Promise((r) => setTimeout(r, 200));
      expect(seen.sort()).toEqual(['run_after', 'run_held']);
    } finally {
      stop();
      feed.close();
      await slow.end();
    }
  });
});

/** Reads an SSE response into messages until `done` says enough (or the stream ends). */
async function readEvents(response: Response, done: (all: EventSourceMessage[]) => boolean): Promise<EventSourceMessage[]> {
  const messages: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (m) => messages.push(m) });
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  while (!done(messages)) {
    const { value, done: ended } = await reader.read();
    if (ended) break;
    parser.feed(value);
  }
  await reader.cancel();
  return messages;
}

describe('GET /v1/agent-runs/events', () => {
  const open = (key: string, headers: Record<string, string> = {}) =>
    fetch(`${app.url}/v1/agent-runs/events`, { headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream', ...headers } });

  it("says ready once listening, then sends the tenant's run changes and no other tenant's", async () => {
    const t = await newTenant(db(), 0);
    const other = await newTenant(db(), 0);
    const response = await open(t.key);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const messages = readEvents(response, (all) => all.some((m) => m.event === 'run.completed'));
    await new Promise((r) => setTimeout(r, 300));
    await recordJourneyEvent(db(), runEvent(other.tenantId, 'run_other'));
    await recordJourneyEvent(db(), runEvent(t.tenantId, 'run_mine'));
    await recordJourneyEvent(db(), runEvent(t.tenantId, 'run_mine', 'completed'));
    const all = await messages;
    expect(all[0]).toMatchObject({ event: 'ready', data: '{}' });
    const events = all.slice(1).map((m) => JSON.parse(m.data) as RunEvent);
    expect(events.map((e) => [e.run_id, e.state])).toEqual([
      ['run_mine', 'awaiting_approval'],
      ['run_mine', 'completed'],
    ]);
    expect(all[1]!.id).toBe(events[0]!.id);
  });

  it('resumes after Last-Event-ID with what was missed, or says reset when too much was', async () => {
    const t = await newTenant(db(), 0);
    await recordJourneyEvent(db(), runEvent(t.tenantId, 'run_1'));
    const first = await open(t.key);
    const start = await readEvents(first, (all) => all.some((m) => m.event === 'ready'));
    expect(start.map((m) => m.event)).toEqual(['ready']);
    const seen = (await db().execute(`select max(id) as id from journey_events where tenant_id = '${t.tenantId}'`)) as unknown as { rows: { id: string }[] };
    const lastId = String(seen.rows[0]!.id);
    await recordJourneyEvent(db(), runEvent(t.tenantId, 'run_2'));
    const resumed = await readEvents(await open(t.key, { 'last-event-id': lastId }), (all) => all.some((m) => m.event === 'ready'));
    expect(resumed.map((m) => m.event)).toEqual(['run.awaiting_approval', 'ready']);
    expect(JSON.parse(resumed[0]!.data)).toMatchObject({ run_id: 'run_2' });

    for (let i = 0; i < 101; i++) await recordJourneyEvent(db(), runEvent(t.tenantId, `run_many_${i}`));
    const reset = await readEvents(await open(t.key, { 'last-event-id': lastId }), (all) => all.some((m) => m.event === 'ready'));
    expect(reset.map((m) => m.event)).toEqual(['reset', 'ready']);
  });

  it('refuses a Last-Event-ID it never sent, and a request without a key', async () => {
    const t = await newTenant(db(), 0);
    const bad = await open(t.key, { 'last-event-id': 'abc' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { param: string } }).error.param).toBe('last-event-id');
    expect((await fetch(`${app.url}/v1/agent-runs/events`)).status).toBe(401);
  });
});
