// The runs projection: created by the API (so idempotency is decided in one
// unique index), updated by workflow activities, read and listed by the API.
import { metrics } from './metrics.ts';
import { and, count, desc, eq, gte, ilike, isNull, lte, type SQL, sql } from 'drizzle-orm';
import { type AnyPgColumn, alias } from 'drizzle-orm/pg-core';
import type { Db } from '../db/client.ts';
import { jsonbParam, preparedPer, selectRows } from '../db/prepared.ts';
import { approvalPolicies, runs } from '../db/schema.ts';
import { newId } from '../domain/ids.ts';
import { endingReceipt } from '../domain/runs/ending-receipt.ts';
import { type RunStatus, statesLeadingTo } from '../domain/runs/states.ts';
import { afterPosition, type Position, toPage } from './keyset-page.ts';
import { KeyedBatcher } from './keyed-batcher.ts';

export type RunRow = typeof runs.$inferSelect;
export type RunPatch = Partial<
  Pick<
    RunRow,
    'status' | 'currentStep' | 'estimate' | 'reservation' | 'usage' | 'plan' | 'approval' | 'result' | 'receipt' | 'failure' | 'completedAt' | 'progress'
  >
>;

// A new run, unless this tenant's Idempotency-Key already made one (then nothing is returned).
const insertRun = preparedPer((db) =>
  db
    .insert(runs)
    .values({
      id: sql.placeholder('id'),
      tenantId: sql.placeholder('tenantId'),
      idempotencyKey: sql.placeholder('idempotencyKey'),
      requestDigest: sql.placeholder('requestDigest'),
      input: sql.placeholder('input'),
      memory: sql.placeholder('memory'),
      model: sql.placeholder('model'),
      status: 'accepted',
      currentStep: 'estimate',
      // The tenant's approval policies as they are now, in the same statement: the run keeps them.
      approvalPolicy: sql`(select jsonb_agg(${approvalPolicies.policy} order by ${approvalPolicies.scope}) from ${approvalPolicies} where ${approvalPolicies.tenantId} = ${sql.placeholder('tenantId')})`,
    })
    .onConflictDoNothing({ target: [runs.tenantId, runs.idempotencyKey], where: sql`${runs.idempotencyKey} is not null` })
    .returning()
    .prepare('gws_insert_run'),
);

const selectRun = preparedPer((db) =>
  db
    .select()
    .from(runs)
    .where(and(eq(runs.tenantId, sql.placeholder('tenantId')), eq(runs.id, sql.placeholder('runId'))))
    .prepare('gws_select_run'),
);

const selectRunsById = preparedPer((db) =>
  db
    .select()
    .from(runs)
    .where(and(sql`${runs.id} = any(${sql.placeholder('runIds')}::text[])`, sql`${runs.tenantId} = any(${sql.placeholder('tenantIds')}::text[])`))
    .prepare('gws_select_runs_by_id'),
);

type RunKey = { tenantId: string; runId: string };

/**
 * Reads of one run (any tenant's) that arrive while a read is in flight go together in the next
 * statement (KeyedBatcher, one queue per database handle). Under load most of a read's cost is its
 * round trip: the statement's write, Postgres waking for it, the reply's parse, a pooled connection.
 * Batched, 50 clients polling runs cost one round trip per batch instead of one each, and at most
 * one of the pool's connections. A read that finds none in flight goes at once, as the single-row
 * statement: nothing waits for a timer.
 */
const runReader = preparedPer((db) => new KeyedBatcher<RunKey, RunRow | null>((_queue, keys) => readRuns(db, keys)));

/** One row or null per key, in order: a run only for its own tenant. Reads of one run share its row, which nobody changes. */
async function readRuns(db: Db, keys: RunKey[]): Promise<(RunRow | null)[]> {
  if (keys.length === 1) return [(await selectRows(selectRun(db), keys[0]!))[0] ?? null];
  const rows = await selectRows(selectRunsById(db), { runIds: keys.map((k) => k.runId), tenantIds: keys.map((k) => k.tenantId) });
  const byId = new Map(rows.map((row) => [row.id, row]));
  return keys.map(({ tenantId, runId }) => {
    const row = byId.get(runId);
    return row?.tenantId === tenantId ? row : null;
  });
}

export type CreateRunOutcome = { kind: 'created'; run: RunRow } | { kind: 'replayed'; run: RunRow } | { kind: 'key_reused'; run: RunRow };

/**
 * Creates the run row, or finds the one this tenant's Idempotency-Key already
 * made. Concurrent duplicates meet in the unique index, so exactly one wins.
 */
export async function createRun(
  db: Db,
  input: { tenantId: string; idempotencyKey: string | null; requestDigest: string; input: string; memory: boolean; model: string },
): Promise<CreateRunOutcome> {
  const [created] = await insertRun(db).execute({ id: newId('run', 12), ...input });
  if (created) return { kind: 'created', run: created };
  const [existing] = await db
    .select()
    .from(runs)
    .where(and(eq(runs.tenantId, input.tenantId), eq(runs.idempotencyKey, input.idempotencyKey!)));
  if (!existing) throw new Error('idempotent run vanished between insert and select');
  return existing.requestDigest === input.requestDigest ? { kind: 'replayed', run: existing } : { kind: 'key_reused', run: existing };
}

export function getRun(db: Db, tenantId: string, runId: string): Promise<RunRow | null> {
  return runReader(db).submit('runs', { tenantId, runId });
}

/**
 * Rows still as the API wrote them (accepted, at the estimate step) and older
 * than `before`: candidates for the reconciler, which checks Temporal for each.
 */
export async function possiblyStrandedRuns(db: Db, before: Date, limit: number): Promise<RunRow[]> {
  return db
    .select()
    .from(runs)
    .where(and(eq(runs.status, 'accepted'), eq(runs.currentStep, 'estimate'), lte(runs.createdAt, before)))
    .orderBy(runs.createdAt)
    .limit(limit);
}

/** The receipt of a run that ends before its workflow did anything: every action unresolved, with why. */
async function receiptBeforeStart(db: Db, runId: string, failure: { code: string; message: string }) {
  const row = await runAtEnd(db, runId);
  if (!row) return null;
  return endingReceipt({ runId, input: row.input, memory: row.memory, status: 'failed', step: 'estimate', plan: null, results: [], approval: null, failure });
}

/** Ends a run whose workflow could not be started and that nobody can start safely (it has no Idempotency-Key). */
export async function markStartFailed(db: Db, runId: string): Promise<void> {
  const failure = { code: 'start_failed', message: 'The run could not be started; nothing was reserved. Retry the request.' };
  const receipt = await receiptBeforeStart(db, runId, failure);
  const patch = { status: 'failed' as const, currentStep: null, completedAt: new Date(), failure, ...(receipt ? { receipt } : {}) };
  await moveRun(db, runId, patch, ['accepted']);
}

/** Cancels a run whose workflow never started (the reconciler has not started it either: it is still accepted). */
export async function cancelBeforeStart(db: Db, runId: string): Promise<void> {
  const failure = { code: 'cancelled', message: 'The run was cancelled before its work started; nothing was reserved or done.' };
  const receipt = await receiptBeforeStart(db, runId, failure);
  const ended = await db
    .update(runs)
    .set({ status: 'failed', currentStep: null, completedAt: new Date(), updatedAt: new Date(), failure, ...(receipt ? { receipt } : {}) })
    .where(and(eq(runs.id, runId), eq(runs.status, 'accepted')))
    .returning({ id: runs.id });
  // Ended here, not by a workflow: counted here, once (the workflow's moves count in activities/projection.ts).
  if (ended.length) metrics.runsEnded.inc({ state: 'failed' });
}

/** A run's recorded state and when it entered it. */
export interface RecordedState {
  status: string;
  since: Date;
}

/** The runs row as it was before an update, joined by id: Postgres returns only the new values. */
const before = alias(runs, 'before');

/** The columns a move may write, in a fixed order: a move's statement is named by the set it writes. */
const MOVE_COLUMNS = [
  'status',
  'currentStep',
  'estimate',
  'reservation',
  'usage',
  'plan',
  'approval',
  'result',
  'receipt',
  'failure',
  'completedAt',
  'progress',
] as const satisfies readonly (keyof RunPatch)[];
type MoveColumn = (typeof MOVE_COLUMNS)[number];

/** The columns a move writes as JSON; the others are text, and the end's time. */
const isJsonColumn = (column: MoveColumn) => column !== 'status' && column !== 'currentStep' && column !== 'completedAt';

/**
 * A column's value as the statement takes it. Placeholders go through no column mapping: JSON is
 * serialised by moveValues (jsonbParam: a null stays SQL NULL) and cast here, as is the time.
 */
function moveValue(column: MoveColumn): SQL {
  const value = sql.placeholder(column);
  if (isJsonColumn(column)) return sql`${value}::jsonb`;
  return column === 'completedAt' ? sql`${value}::timestamptz` : sql`${value}`;
}

function moveValues(runId: string, patch: RunPatch, from: readonly RunStatus[]): Record<string, unknown> {
  const values: Record<string, unknown> = { runId, from: [...from] };
  for (const column of MOVE_COLUMNS) {
    const value = patch[column];
    if (value === undefined) continue;
    values[column] = isJsonColumn(column) ? jsonbParam(value) : value;
  }
  return values;
}

/**
 * One named statement per set of columns a move writes, built once per handle: a run makes ten
 * moves, each parsed and planned once per connection instead of built and planned every time.
 */
const moveStatements = new Map<number, ReturnType<typeof moveStatement>>();
function moveStatement(mask: number) {
  return preparedPer((db) => {
    const set: Partial<Record<MoveColumn, SQL>> = {};
    for (const [i, column] of MOVE_COLUMNS.entries()) if (mask & (1 << i)) set[column] = moveValue(column);
    return (
      db
        .update(runs)
        // state_since changes only with the state: a move within it (progress, step results) keeps it.
        .set({ ...set, updatedAt: sql`now()`, stateSince: sql`case when ${runs.status} = ${sql.placeholder('status')} then ${runs.stateSince} else now() end` })
        .from(before)
        .where(and(eq(runs.id, sql.placeholder('runId')), eq(before.id, runs.id), sql`${runs.status} = any(${sql.placeholder('from')}::text[])`))
        .returning({ status: before.status, since: sinceOf(before) })
        .prepare(`gws_move_run_${mask.toString(36)}`)
    );
  });
}

function moveStatementFor(patch: RunPatch) {
  const mask = MOVE_COLUMNS.reduce((m, column, i) => (patch[column] === undefined ? m : m | (1 << i)), 0);
  let statement = moveStatements.get(mask);
  if (!statement) {
    statement = moveStatement(mask);
    moveStatements.set(mask, statement);
  }
  return statement;
}

/**
 * Writes a run's move to `patch.status`, only over a state from which the table of moves
 * (domain/runs/states.ts) leads there, or over `from` when given (a subset of those). Returns the
 * state it left and since when, or null, writing nothing, when the row is in none of them.
 */
export async function moveRun(
  db: Db,
  runId: string,
  patch: RunPatch & { status: RunStatus },
  from: readonly RunStatus[] = statesLeadingTo(patch.status),
): Promise<RecordedState | null> {
  const [left] = await selectRows(moveStatementFor(patch)(db), moveValues(runId, patch, from));
  return left ?? null;
}

/**
 * What a run's receipt is computed from when it ends before verification; null when there is no such
 * run or it has its receipt (a verified run, at every end but this: its row is not read or parsed).
 */
export async function runAtEnd(db: Db, runId: string) {
  const [row] = await db
    .select({ input: runs.input, memory: runs.memory, plan: runs.plan, approval: runs.approval, result: runs.result, failure: runs.failure })
    .from(runs)
    .where(and(eq(runs.id, runId), isNull(runs.receipt)));
  return row ?? null;
}

/** When a row entered its state (rows written before state_since: when they were created). */
function sinceOf(row: { stateSince: AnyPgColumn; createdAt: AnyPgColumn }) {
  return sql<Date>`coalesce(${row.stateSince}, ${row.createdAt})`.mapWith((v) => new Date(v));
}

/** The run's recorded state and when it entered it, or null when there is no such run. */
export async function recordedState(db: Db, runId: string): Promise<RecordedState | null> {
  const [row] = await db
    .select({ status: runs.status, since: sinceOf(runs) })
    .from(runs)
    .where(eq(runs.id, runId));
  return row ?? null;
}

export interface RunFilters {
  status?: string;
  createdAfter?: Date;
  createdBefore?: Date;
  /** Case-insensitive text contained in the input. */
  q?: string;
}

/** Position after a row in created_at desc, id desc order. */
export type RunCursor = Position;

/** One page, newest first; `next` is the cursor of the last row when more may follow. */
export async function listRuns(
  db: Db,
  tenantId: string,
  filters: RunFilters,
  page: { limit: number; after?: RunCursor },
): Promise<{ rows: RunRow[]; next: RunCursor | null }> {
  const conditions = [eq(runs.tenantId, tenantId)];
  if (filters.status) conditions.push(eq(runs.status, filters.status));
  if (filters.createdAfter) conditions.push(gte(runs.createdAt, filters.createdAfter));
  if (filters.createdBefore) conditions.push(lte(runs.createdAt, filters.createdBefore));
  if (filters.q) conditions.push(ilike(runs.input, `%${filters.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`));
  if (page.after) conditions.push(afterPosition(runs.createdAt, runs.id, page.after));
  const rows = await db
    .select()
    .from(runs)
    .where(and(...conditions))
    .orderBy(desc(runs.createdAt), desc(runs.id))
    .limit(page.limit + 1);
  return toPage(rows, page.limit);
}

/** Runs awaiting approval now, over all tenants (GET /metrics). */
export async function countAwaitingApproval(db: Db): Promise<number> {
  const [row] = await db.select({ n: count() }).from(runs).where(eq(runs.status, 'awaiting_approval'));
  return row?.n ?? 0;
}
