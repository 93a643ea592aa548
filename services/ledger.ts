// The credit ledger. Grants and charges are entries (idempotent by entry key);
// reservations are holds, unique per run and step, so a retried activity can
// neither double a hold nor charge twice. Balance = grants - charges;
// available = balance - open holds. Both are kept running in tenant_balances,
// written in the same transaction as every entry and hold, so nothing here sums
// a tenant's history: a reserve is one conditional update of that row.
import { and, desc, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { ledgerEntries, ledgerHolds, tenantBalances } from '../db/schema.ts';
import { applicableBudgets, type BudgetScope, headroomUnder } from './budgets.ts';

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
export async function grantCredits(
  db: Db,
  input: { tenantId: string; amount: number; entryKey: string; note?: string },
): Promise<boolean> {
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

type ReserveInput = { tenantId: string; runId: string; step: string; amount: number; budgetScope?: BudgetScope };

/** Postgres's SQLSTATE of a failed query, through Drizzle's wrapping. */
function sqlStateOf(err: unknown): string | undefined {
  const e = err as { code?: unknown; cause?: { code?: unknown } };
  const code = typeof e.code === 'string' ? e.code : e.cause?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * The common reserve (a new hold, no budget applies, the balance covers it) in one statement, so
 * the tenant's balance row is locked only while Postgres runs it and commits, never across a
 * round trip to this process (chat reserves on every completion). Null when it cannot decide
 * alone and nothing was written: the hold exists already (a retry), the tenant has no balance
 * row yet, or the balance does not cover it.
 */
async function holdInOneStatement(db: Db, input: ReserveInput): Promise<ReserveOutcome | null> {
  try {
    const result = (await db.execute(sql`
      with hold as (
        insert into ledger_holds (tenant_id, run_id, step, amount, status)
        values (${input.tenantId}, ${input.runId}, ${input.step}, ${input.amount}, 'open')
        on conflict (run_id, step) do nothing
        returning id
      ), taken as (
        update tenant_balances set held = held + ${input.amount}, updated_at = now()
        where tenant_id = ${input.tenantId} and balance - held >= ${input.amount} and exists (select 1 from hold)
        returning tenant_id
      )
      select (select id from hold) as hold_id,
        -- A new hold the balance did not cover must not stay: dividing by the zero rows taken fails
        -- the statement (SQLSTATE 22012), which undoes the hold.
        case when exists (select 1 from hold) then 1 / (select count(*) from taken)::int else 1 end as covered
    `)) as unknown as { rows: { hold_id: string | number | null }[] };
    const holdId = result.rows[0]?.hold_id;
    return holdId == null ? null : { status: 'held', holdId: Number(holdId), amount: input.amount };
  } catch (err) {
    if (sqlStateOf(err) === '22012') return null;
    throw err;
  }
}

/**
 * Holds `amount` for a run step if the tenant's balance and budgets cover it.
 * Repeating it returns the same hold. Without budgets, one statement does it
 * (holdInOneStatement); otherwise, and when that cannot decide, a transaction:
 * the hold is inserted first (a concurrent duplicate waits on its unique key,
 * then finds it); only a newly inserted hold takes from the balance, with one
 * conditional update that also serialises the tenant's reserves, so the budget
 * check after it cannot be squeezed past.
 */
export async function reserve(db: Db, input: ReserveInput): Promise<ReserveOutcome> {
  // Which budgets apply is read before the balance row is locked; the room under them is counted
  // after, under the lock, so concurrent reserves cannot both spend the same room.
  const budgets = input.budgetScope ? await applicableBudgets(db, input.tenantId, input.budgetScope) : [];
  if (budgets.length === 0) {
    const held = await holdInOneStatement(db, input);
    if (held) return held;
  }
  try {
    return await db.transaction(async (tx): Promise<ReserveOutcome> => {
      const [inserted] = await tx
        .insert(ledgerHolds)
        .values({ tenantId: input.tenantId, runId: input.runId, step: input.step, amount: input.amount, status: 'open' })
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
        const created = await tx.insert(tenantBalances).values({ tenantId: input.tenantId }).onConflictDoNothing().returning({ tenantId: tenantBalances.tenantId });
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

interface SettleRow {
  status: string;
  charged_amount: string | number | null;
  released_amount: string | number | null;
  charged: string | number | null;
  hold_amount: string | number | null;
}

/**
 * Charges actual usage, bounded by the hold, and releases the rest: one statement, so the
 * tenant's balance row is locked only while Postgres runs it and commits, never across a round
 * trip to this process (chat settles on every completion; at c=50 that round trip waited behind
 * the other requests' work). It locks the hold; an open hold gets its charge entry (once: the
 * entry key), is closed, and moves the running balance; a closed hold returns its recorded
 * outcome, so a repeated settle charges nothing more.
 */
export async function settle(db: Db, input: { runId: string; step: string; actualAmount: number }): Promise<SettleOutcome> {
  // Postgres runs each data-modifying CTE exactly once, whether or not the final select reads it.
  const result = (await db.execute(sql`
    with hold as (
      select id, tenant_id, run_id, step, amount, status, charged_amount, released_amount
      from ledger_holds where run_id = ${input.runId} and step = ${input.step}
      for update
    ), closing as (
      select id, tenant_id, run_id, step, amount, greatest(0, least(${input.actualAmount}::bigint, amount)) as charged
      from hold where status = 'open'
    ), entry as (
      insert into ledger_entries (tenant_id, run_id, kind, amount, entry_key)
      select tenant_id, run_id, 'charge', charged, 'charge:' || run_id || ':' || step from closing where charged > 0
      on conflict (entry_key) do nothing
      returning amount
    ), closed as (
      update ledger_holds h
      set status = 'settled', charged_amount = c.charged, released_amount = c.amount - c.charged, closed_at = now()
      from closing c where h.id = c.id
    ), moved as (
      insert into tenant_balances as b (tenant_id, balance, held)
      select tenant_id, -coalesce((select sum(amount) from entry), 0), -amount from closing
      on conflict (tenant_id) do update
      set balance = b.balance + excluded.balance, held = b.held + excluded.held, updated_at = now()
    )
    select h.status, h.charged_amount, h.released_amount, c.charged, c.amount as hold_amount
    from hold h left join closing c on c.id = h.id
  `)) as unknown as { rows: SettleRow[] };
  const row = result.rows[0];
  if (!row) return { charged: 0, released: 0 };
  if (row.status !== 'open') return { charged: Number(row.charged_amount ?? 0), released: Number(row.released_amount ?? 0) };
  const charged = Number(row.charged);
  return { charged, released: Number(row.hold_amount) - charged };
}

/**
 * Compensation: releases the whole hold (failure, rejection, cancel). It locks the hold first; a
 * hold already closed returns its recorded outcome, so a repeated release (or one after a settle)
 * changes nothing.
 */
export function release(db: Db, input: { runId: string; step: string }): Promise<SettleOutcome> {
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
      .set({ status: 'released', chargedAmount: 0, releasedAmount: hold.amount, closedAt: new Date() })
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
    .select({ runId: ledgerEntries.runId, amount: ledgerEntries.amount, createdAt: ledgerEntries.createdAt })
    .from(ledgerEntries)
    .where(and(eq(ledgerEntries.tenantId, tenantId), eq(ledgerEntries.kind, 'charge')))
    .orderBy(desc(ledgerEntries.createdAt), desc(ledgerEntries.id))
    .limit(100);
  return { ...balance, openReservations: open, settledCharges: charges };
}
