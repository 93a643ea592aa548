// The projection writes a run's move only when the table of moves has it: a move written
// before (a retry, or a replay behind the record) changes nothing quietly; any other move
// is refused loudly (an error log line, nothing written).
import { MockActivityEnvironment } from '@temporalio/testing';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { projectionActivities } from '../activities/projection.ts';
import { type Database, openPostgres } from '../db/client.ts';
import { journeyEvents, runs } from '../db/schema.ts';
import type { RunTransition } from '../domain/runs/transition.ts';
import { metrics } from '../services/metrics.ts';
import { storedRun, newTenant } from './support/run-stack.ts';
import { until } from './support/until.ts';

let database: Database;
beforeAll(() => {
  database = openPostgres(inject('databaseUrl'));
});
afterAll(() => database.close());

function recorder() {
  const errors: { message: string; meta: unknown }[] = [];
  const logger = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: (message: string, meta?: unknown) => errors.push({ message, meta }) };
  const record = (t: RunTransition) => new MockActivityEnvironment({}, { logger }).run(projectionActivities({ db: database.db }).recordTransition, t);
  return { errors, record };
}

async function newRun() {
  const t = await newTenant(database.db);
  const run = await storedRun(database.db, t.tenantId, 'Tell the team that the notes are ready.');
  const move = (seq: number, status: RunTransition['status'], step: RunTransition['step'] = 'estimate'): RunTransition => ({
    runId: run.id,
    tenantId: t.tenantId,
    seq,
    status,
    step,
    kind: `run.${status}`,
    patch: {},
  });
  const row = async () => (await database.db.select().from(runs).where(eq(runs.id, run.id)))[0]!;
  const events = async () => (await database.db.select().from(journeyEvents).where(eq(journeyEvents.runId, run.id))).map((e) => e.eventKey).sort();
  return { id: run.id, move, row, events };
}

describe('recordTransition', () => {
  it('writes legal moves, each with its journey event', async () => {
    const { errors, record } = recorder();
    const run = await newRun();
    await record(run.move(1, 'accepted'));
    await record(run.move(2, 'planning'));
    await record(run.move(3, 'awaiting_approval', 'approval'));
    expect((await run.row()).status).toBe('awaiting_approval');
    expect(await run.events()).toEqual([`${run.id}:1`, `${run.id}:2`, `${run.id}:3`]);
    expect(errors).toEqual([]);
  });

  it('keeps when the run entered its state through moves within it, and counts the time in a state from there', async () => {
    const { record } = recorder();
    const run = await newRun();
    await record(run.move(1, 'planning', 'plan'));
    const entered = (await run.row()).stateSince!;
    expect(entered).toBeInstanceOf(Date);
    // A move within planning (progress, as each step's result does while executing) keeps it.
    await until(async () => Date.now() - entered.getTime() > 1_100, 'a second to pass');
    await record(run.move(2, 'planning', 'plan'));
    expect((await run.row()).stateSince).toEqual(entered);
    const before = await metrics.runStateDuration.get();
    const sumOf = (m: typeof before) => m.values.find((v) => v.metricName?.endsWith('_sum') && v.labels.state === 'planning')?.value ?? 0;
    await record(run.move(3, 'awaiting_approval', 'approval'));
    // The time in planning counts from when it was entered, not from the last move within it.
    expect(sumOf(await metrics.runStateDuration.get()) - sumOf(before)).toBeGreaterThanOrEqual(1.1);
    expect((await run.row()).stateSince!.getTime()).toBeGreaterThan(entered.getTime());
  });

  // Each move is a prepared statement with its JSON serialised by hand (services/runs.ts moveValues).
  it('writes what a move carries: JSON as JSON, a null as SQL NULL, a string as its text, the end as a time', async () => {
    const { record } = recorder();
    const run = await newRun();
    const failure = { code: 'approval_rejected', message: 'Rejected: "no" \\ twice' };
    await record({ ...run.move(1, 'planning', 'plan'), patch: { reservation: { amount: 7, status: 'held' }, failure } });
    expect((await run.row()).failure).toEqual(failure);
    await record({ ...run.move(2, 'failed', 'approval'), patch: { failure: null, approval: null, completed: true } });
    const { rows } = (await database.db.execute(sql`
      select jsonb_typeof(reservation) as reservation, failure is null as failure_is_null, approval is null as approval_is_null,
             current_step, completed_at is not null as completed
      from runs where id = ${run.id}`)) as unknown as { rows: Record<string, unknown>[] };
    expect(rows[0]).toEqual({ reservation: 'object', failure_is_null: true, approval_is_null: true, current_step: null, completed: true });
    expect((await run.row()).reservation).toEqual({ amount: 7, status: 'held' });
  });

  it('refuses an illegal move loudly and writes nothing', async () => {
    const { errors, record } = recorder();
    const run = await newRun();
    await record(run.move(1, 'accepted'));
    await record(run.move(2, 'completed', 'settle')); // accepted -> completed: no such move
    expect((await run.row()).status).toBe('accepted');
    expect(await run.events()).toEqual([`${run.id}:1`]);
    expect(errors).toHaveLength(1);
    expect(errors[0]!.message).toContain('illegal run move refused');
    expect(errors[0]!.meta).toMatchObject({ runId: run.id, seq: 2, from: 'accepted', to: 'completed' });
  });

  it('a replay behind the record, and a retry of the last move, change nothing and log nothing', async () => {
    const { errors, record } = recorder();
    const run = await newRun();
    for (const [seq, status] of [
      [1, 'accepted'],
      [2, 'planning'],
      [3, 'awaiting_approval'],
    ] as const)
      await record(run.move(seq, status));
    await record(run.move(2, 'planning')); // a replay: awaiting_approval -> planning is no move, but seq 2 was written
    expect((await run.row()).status).toBe('awaiting_approval');
    await record(run.move(4, 'failed'));
    await record(run.move(4, 'failed')); // a retry of a terminal move: failed -> failed is no move, but it is this one
    expect((await run.row()).status).toBe('failed');
    expect(await run.events()).toEqual([1, 2, 3, 4].map((n) => `${run.id}:${n}`));
    expect(errors).toEqual([]);
  });
});
