// The credit ledger. Grants and charges are entries (idempotent by entry key);
// reservations are holds, unique per run and step, so a retried activity can
// neither double a hold nor charge twice. Balance = grants - charges;
// available = balance - open holds. Both are kept running in tenant_balances,
// written in the same transaction as every entry and hold, so nothing here sums
// a tenant's history: a reserve is one conditional update of that row.
import { and, desc, eq, sql } from 'drizzle-orm';
import type { CreditTotal } from './metrics.ts';
import type { Db } from '../db/client.ts';
import type { UsageBasis } from '../domain/pricing.ts';
import { preparedPer } from '../db/prepared.ts';
import { ledgerEntries, ledgerHolds, tenantBalances } from '../db/schema.ts';
import { applicableBudgets, type BudgetScope, headroomUnder } from './budgets.ts';
import { KeyedBatcher } from './keyed-batcher.ts';

export interface Balance {
  balance: number;
  held: number;
  available: number;
}

export type ReserveOutcome =
  | { status: 'held'; holdId: number; amount: number }
  | { status: 'insufficient'; required: number; available: number }
  | { status: 'over_budget'; required: number; headroom: number };

export interface SettleOutcome {
  charged: number;
  released: number;
}

type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];

async function balanceIn(tx: Db | Tx, tenantId: string): Promise<Balance> {
  const [row] = await tx
    .select({ balance: tenantBalances.balance, held: tenantBalances.held })
    .from(tenantBalances)
    .where(eq(tenantBalances.tenantId, tenantId));
  const balance = Number(row?.balance ?? 0);
  const held = Number(row?.held ?? 0);
  return { balance, held, available: balance - held };
}

/** The tenant's running balance (one row read). */
export function balanceOf(db: Db, tenantId: string): Promise<Balance> {
  return balanceIn(db, tenantId);
}

/** Moves the tenant's running balance and holds by these amounts (creating its row at need). */
async function adjustBalance(tx: Tx, tenantId: string, delta: { balance?: number; held?: number }): Promise<void> {
  await tx
    .insert(tenantBalances)
    .values({ tenantId, balance: delta.balance ?? 0, held: delta.held ?? 0 })
    .onConflictDoUpdate({
      target: tenantBalances.tenantId,
      set: {
        balance: sql`tenant_balances.balance + excluded.balance`,
        held: sql`tenant_balances.held + excluded.held`,
        updatedAt: sql`now()`,
      },
    });
}

/** Adds credits; with an entryKey, repeating the same grant is a no-op. Returns whether it was new. */
export async function grantCredits(db: Db, input: { tenantId: string; amount: number; entryKey: string; note?: string }): Promise<boolean> {
  return db.transaction(async (tx) => {
    const inserted = await tx
      .insert(ledgerEntries)
      .values({ tenantId: input.tenantId, kind: 'grant', amount: input.amount, entryKey: input.entryKey, note: input.note ?? null })
      .onConflictDoNothing({ target: ledgerEntries.entryKey })
      .returning({ id: ledgerEntries.id });
    if (inserted.length === 0) return false;
    await adjustBalance(tx, input.tenantId, { balance: input.amount });
    return true;
  });
}

/** The one conditional update of a reserve: holds `amount` when the available balance covers it. */
async function holdFromBalance(tx: Tx, tenantId: string, amount: number): Promise<boolean> {
  const rows = await tx
    .update(tenantBalances)
    .set({ held: sql`${tenantBalances.held} + ${amount}`, updatedAt: sql`now()` })
    .where(and(eq(tenantBalances.tenantId, tenantId), sql`${tenantBalances.balance} - ${tenantBalances.held} >= ${amount}`))
    .returning({ tenantId: tenantBalances.tenantId });
  return rows.length > 0;
}

/** Ends a reserve's transaction without its hold (rolled back), carrying the outcome to return. */
class Refused extends Error {
  constructor(readonly outcome: ReserveOutcome) {
    super(outcome.status);
  }
}

type ReserveInput = {
  tenantId: string;
  runId: string;
  step: string;
  amount: number;
  budgetScope?: BudgetScope;
  /** The API instance that will settle or release it (chat); the hold sweeper releases it once that instance is gone. */
  owner?: string;
};

interface HoldRequest {
  runId: string;
  step: string;
  amount: number;
  owner: string | null;
}

/** Postgres's SQLSTATE of a failed query, through Drizzle's wrapping. */
function sqlStateOf(err: unknown): string | undefined {
  const e = err as { code?: unknown; cause?: { code?: unknown } };
  const code = typeof e.code === 'string' ? e.code : e.cause?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * The common reserves (new holds, no budget applies, the balance covers them) of one tenant in one
 * statement: the holds that fit the available balance, in arrival order, are inserted, then one
 * conditional update takes their sum from the balance row, so the row is locked only while
 * Postgres runs the statement and commits, never across a round trip to this process. Reserves
 * that arrive while one runs go together in the next (holdBatched): one lock and one commit for
 * many, so chat's throughput grows with concurrency instead of queueing on the row.
 *
 * Locks are taken as every other ledger write takes them, holds first and the balance row last,
 * and holds in key order, so it cannot deadlock with a settle, a release or another batch. If the
 * balance moved between the statement's read and its update so that the holds no longer fit,
 * dividing by the zero rows updated fails the statement (SQLSTATE 22012), which undoes the holds.
 * Null for a request it cannot decide alone, and nothing of it was written: the hold exists
 * already (a retry), the tenant has no balance row yet, or the balance does not cover it after
 * the ones before it.
 */
async function holdsInOneStatement(db: Db, tenantId: string, requests: HoldRequest[]): Promise<(ReserveOutcome | null)[]> {
  const wanted = JSON.stringify(requests.map((r, ord) => ({ run_id: r.runId, step: r.step, amount: r.amount, owner: r.owner, ord })));
  let rows: { id: string | number; ord: number; amount: string | number }[];
  try {
    const result = (await db.execute(sql`
      with wanted as (
        select * from jsonb_to_recordset(${wanted}::jsonb) as w(run_id text, step text, amount bigint, owner text, ord int)
      ), room as (
        select balance - held as available from tenant_balances where tenant_id = ${tenantId}
      ), fitting as (
        select w.*, sum(w.amount) over (order by w.ord) as running from wanted w
      ), hold as (
        insert into ledger_holds (tenant_id, run_id, step, amount, status, owner)
        select ${tenantId}, f.run_id, f.step, f.amount, 'open', f.owner from fitting f, room where f.running <= room.available
        order by f.run_id, f.step
        on conflict (run_id, step) do nothing
        returning id, run_id, step, amount
      ), taken as (
        update tenant_balances set held = held + (select sum(amount) from hold), updated_at = now()
        where tenant_id = ${tenantId} and balance - held >= (select sum(amount) from hold)
        returning tenant_id
      )
      select h.id, w.ord, h.amount, 1 / (select count(*) from taken)::int as covered
      from hold h join wanted w using (run_id, step)
    `)) as unknown as { rows: { id: string | number; ord: number; amount: string | number }[] };
    rows = result.rows;
  } catch (err) {
    // Each request then takes the transactional path and meets its own outcome there; a request
    // alone has nothing to gain from that unless the balance moved.
    if (sqlStateOf(err) === '22012' || requests.length > 1) return requests.map(() => null);
    throw err;
  }
  const outcomes: (ReserveOutcome | null)[] = requests.map(() => null);
  for (const row of rows) outcomes[Number(row.ord)] = { status: 'held', holdId: Number(row.id), amount: Number(row.amount) };
  return outcomes;
}

/** One batcher per database handle (tests run several services side by side). */
const holdBatcher = preparedPer(
  (db) => new KeyedBatcher<HoldRequest, ReserveOutcome | null>((tenantId, requests) => holdsInOneStatement(db, tenantId, requests)),
);
function holdBatched(db: Db, input: ReserveInput): Promise<ReserveOutcome | null> {
  return holdBatcher(db).submit(input.tenantId, { runId: input.runId, step: input.step, amount: input.amount, owner: input.owner ?? null });
}

/**
 * Holds `amount` for a run step if the tenant's balance and budgets cover it.
 * Repeating it returns the same hold. Without budgets, one statement does it, for
 * this and the tenant's concurrent reserves (holdsInOneStatement); otherwise, and
 * when that cannot decide, a transaction: the hold is inserted first (a concurrent
 * duplicate waits on its unique key, then finds it); only a newly inserted hold
 * takes from the balance, with one conditional update that also serialises the
 * tenant's reserves, so the budget check after it cannot be squeezed past.
 */
export async function reserve(db: Db, input: ReserveInput): Promise<ReserveOutcome> {
  // Which budgets apply is read before the balance row is locked; the room under them is counted
  // after, under the lock, so concurrent reserves cannot both spend the same room.
  const budgets = input.budgetScope ? await applicableBudgets(db, input.tenantId, input.budgetScope) : [];
  if (budgets.length === 0) {
    const held = await holdBatched(db, input);
    if (held) return held;
  }
  try {
    return await db.transaction(async (tx): Promise<ReserveOutcome> => {
      const [inserted] = await tx
        .insert(ledgerHolds)
        .values({ tenantId: input.tenantId, runId: input.runId, step: input.step, amount: input.amount, status: 'open', owner: input.owner ?? null })
        .onConflictDoNothing({ target: [ledgerHolds.runId, ledgerHolds.step] })
        .returning({ id: ledgerHolds.id });
      if (!inserted) {
        const [existing] = await tx
          .select()
          .from(ledgerHolds)
          .where(and(eq(ledgerHolds.runId, input.runId), eq(ledgerHolds.step, input.step)));
        return { status: 'held', holdId: existing!.id, amount: existing!.amount };
      }
      let taken = await holdFromBalance(tx, input.tenantId, input.amount);
      if (!taken) {
        // A tenant that never had a ledger write has no balance row yet.
        const created = await tx
          .insert(tenantBalances)
          .values({ tenantId: input.tenantId })
          .onConflictDoNothing()
          .returning({ tenantId: tenantBalances.tenantId });
        if (created.length > 0) taken = await holdFromBalance(tx, input.tenantId, input.amount);
      }
      if (!taken) {
        const { available } = await balanceIn(tx, input.tenantId);
        throw new Refused({ status: 'insufficient', required: input.amount, available });
      }
      if (budgets.length > 0) {
        const headroom = await headroomUnder(tx as unknown as Db, input.tenantId, budgets, inserted.id);
        if (headroom < input.amount) throw new Refused({ status: 'over_budget', required: input.amount, headroom: Math.max(0, headroom) });
      }
      return { status: 'held', holdId: inserted.id, amount: input.amount };
    });
  } catch (err) {
    if (err instanceof Refused) return err.outcome;
    throw err;
  }
}

export type { UsageBasis };

interface SettleRequest {
  runId: string;
  step: string;
  actualAmount: number;
  /** How the usage was known; written on the charge entry, so the bill says whether it was estimated. */
  usageBasis?: UsageBasis;
}

interface SettleRow {
  ord: number;
  status: string;
  charged_amount: string | number | null;
  released_amount: string | number | null;
  charged: string | number | null;
  hold_amount: string | number | null;
}

/**
 * Settles holds in one statement, so the tenant's balance row is locked only while Postgres runs it
 * and commits, never across a round trip to this process. It locks the holds; an open hold gets
 * its charge entry (once: the entry key), is closed, and moves the running balance; a closed hold
 * answers its recorded outcome, so a repeated settle charges nothing more (the same hold twice in
 * one batch: the first request decides, the second answers the same). One answer per request,
 * null for a hold that does not exist.
 */
async function settleInOneStatement(db: Db, requests: SettleRequest[]): Promise<(SettleOutcome | null)[]> {
  const wanted = JSON.stringify(requests.map((r, ord) => ({ run_id: r.runId, step: r.step, actual: r.actualAmount, basis: r.usageBasis ?? null, ord })));
  // Postgres runs each data-modifying CTE exactly once, whether or not the final select reads it.
  const result = (await db.execute(sql`
    with wanted as (
      select * from jsonb_to_recordset(${wanted}::jsonb) as w(run_id text, step text, actual bigint, basis text, ord int)
    ), hold as (
      select h.id, h.tenant_id, h.run_id, h.step, h.amount, h.status, h.charged_amount, h.released_amount, w.actual, w.basis, w.ord
      from ledger_holds h join wanted w on h.run_id = w.run_id and h.step = w.step
      order by h.id
      for update of h
    ), closing as (
      select distinct on (id) id, tenant_id, run_id, step, amount, basis, greatest(0, least(actual, amount)) as charged
      from hold where status = 'open' order by id, ord
    ), entry as (
      insert into ledger_entries (tenant_id, run_id, kind, amount, entry_key, usage_basis)
      select tenant_id, run_id, 'charge', charged, 'charge:' || run_id || ':' || step, basis from closing where charged > 0
      on conflict (entry_key) do nothing
      returning tenant_id, amount
    ), closed as (
      update ledger_holds h
      set status = 'settled', charged_amount = c.charged, released_amount = c.amount - c.charged, closed_at = now()
      from closing c where h.id = c.id
    ), moved as (
      insert into tenant_balances as b (tenant_id, balance, held)
      select c.tenant_id, -coalesce((select sum(e.amount) from entry e where e.tenant_id = c.tenant_id), 0), -sum(c.amount)
      from closing c group by c.tenant_id
      on conflict (tenant_id) do update
      set balance = b.balance + excluded.balance, held = b.held + excluded.held, updated_at = now()
    )
    select h.ord, h.status, h.charged_amount, h.released_amount, c.charged, c.amount as hold_amount
    from hold h left join closing c on c.id = h.id
  `)) as unknown as { rows: SettleRow[] };
  const outcomes: (SettleOutcome | null)[] = requests.map(() => null);
  for (const row of result.rows) {
    if (row.status !== 'open') {
      outcomes[Number(row.ord)] = { charged: Number(row.charged_amount ?? 0), released: Number(row.released_amount ?? 0) };
    } else {
      const charged = Number(row.charged);
      outcomes[Number(row.ord)] = { charged, released: Number(row.hold_amount) - charged };
    }
  }
  return outcomes;
}

/** Answered for each request of a batch whose statement failed: it settles alone, meeting its own outcome. */
const SETTLE_ALONE = Symbol('settle alone');

async function settleTogether(db: Db, requests: SettleRequest[]): Promise<(SettleOutcome | null | typeof SETTLE_ALONE)[]> {
  try {
    return await settleInOneStatement(db, requests);
  } catch (err) {
    if (requests.length === 1) throw err;
    return requests.map(() => SETTLE_ALONE);
  }
}

/** One batcher per database handle (tests run several services side by side). */
const settleBatcher = preparedPer(
  (db) => new KeyedBatcher<SettleRequest, SettleOutcome | null | typeof SETTLE_ALONE>((_tenantId, requests) => settleTogether(db, requests)),
);

/**
 * Charges actual usage, bounded by the hold, and releases the rest (settleInOneStatement). With the
 * tenant named, the tenant's settles that arrive while one runs go together in the next statement
 * (chat settles on every completion: one lock and one commit of the balance row serve many).
 */
export async function settle(db: Db, input: SettleRequest & { tenantId?: string }): Promise<SettleOutcome> {
  const request: SettleRequest = { runId: input.runId, step: input.step, actualAmount: input.actualAmount, usageBasis: input.usageBasis };
  let outcome: SettleOutcome | null | typeof SETTLE_ALONE = SETTLE_ALONE;
  if (input.tenantId) outcome = await settleBatcher(db).submit(input.tenantId, request);
  if (outcome === SETTLE_ALONE) outcome = (await settleInOneStatement(db, [request]))[0] ?? null;
  return outcome ?? { charged: 0, released: 0 };
}

/**
 * Compensation: releases the whole hold (failure, rejection, cancel). It locks the hold first; a
 * hold already closed returns its recorded outcome, so a repeated release (or one after a settle)
 * changes nothing.
 */
export function release(db: Db, input: { runId: string; step: string; closedBy?: string }): Promise<SettleOutcome> {
  return db.transaction(async (tx) => {
    const [hold] = await tx
      .select()
      .from(ledgerHolds)
      .where(and(eq(ledgerHolds.runId, input.runId), eq(ledgerHolds.step, input.step)))
      .for('update');
    if (!hold) return { charged: 0, released: 0 };
    if (hold.status !== 'open') return { charged: hold.chargedAmount ?? 0, released: hold.releasedAmount ?? 0 };
    await tx
      .update(ledgerHolds)
      .set({ status: 'released', chargedAmount: 0, releasedAmount: hold.amount, closedAt: new Date(), closedBy: input.closedBy ?? null })
      .where(eq(ledgerHolds.id, hold.id));
    await adjustBalance(tx, hold.tenantId, { held: -hold.amount });
    return { charged: 0, released: hold.amount };
  });
}

export async function usageSummary(db: Db, tenantId: string) {
  const balance = await balanceOf(db, tenantId);
  const open = await db
    .select({ runId: ledgerHolds.runId, amount: ledgerHolds.amount, createdAt: ledgerHolds.createdAt })
    .from(ledgerHolds)
    .where(and(eq(ledgerHolds.tenantId, tenantId), eq(ledgerHolds.status, 'open')))
    .orderBy(desc(ledgerHolds.createdAt))
    .limit(100);
  const charges = await db
    .select({ runId: ledgerEntries.runId, amount: ledgerEntries.amount, usageBasis: ledgerEntries.usageBasis, createdAt: ledgerEntries.createdAt })
    .from(ledgerEntries)
    .where(and(eq(ledgerEntries.tenantId, tenantId), eq(ledgerEntries.kind, 'charge')))
    .orderBy(desc(ledgerEntries.createdAt), desc(ledgerEntries.id))
    .limit(100);
  return { ...balance, openReservations: open, settledCharges: charges };
}

/** Credits moved by holds since the ledger began, by tenant class and use (GET /metrics: services/metrics.ts). */
export async function creditTotals(db: Db): Promise<CreditTotal[]> {
  type Row = { tenant_class: 'dev' | 'customer'; use: 'run' | 'chat'; reserved: string; settled: string; released: string };
  const result = (await db.execute(sql`
    select case when t.name = 'dev' then 'dev' else 'customer' end as tenant_class,
           case when h.run_id like 'run\_%' then 'run' else 'chat' end as use,
           coalesce(sum(h.amount), 0) as reserved,
           coalesce(sum(h.charged_amount), 0) as settled,
           coalesce(sum(h.released_amount), 0) as released
    from ledger_holds h join tenants t on t.id = h.tenant_id
    group by 1, 2`)) as unknown as { rows: Row[] };
  return result.rows.map((r) => ({
    tenantClass: r.tenant_class,
    use: r.use,
    reserved: Number(r.reserved),
    settled: Number(r.settled),
    released: Number(r.released),
  }));
}
