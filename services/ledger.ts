// The credit ledger. Grants and charges are entries (idempotent by entry key);
// reservations are holds, unique per run and step, so a retried activity can
// neither double a hold nor charge twice. Balance = grants - charges;
// available = balance - open holds.
import { and, desc, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { ledgerEntries, ledgerHolds, tenants } from '../db/schema.ts';
import { type BudgetScope, budgetHeadroom } from './budgets.ts';

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
  const [entries] = await tx
    .select({ sum: sql<string>`coalesce(sum(case when ${ledgerEntries.kind} = 'grant' then ${ledgerEntries.amount} else -${ledgerEntries.amount} end), 0)` })
    .from(ledgerEntries)
    .where(eq(ledgerEntries.tenantId, tenantId));
  const [holds] = await tx
    .select({ sum: sql<string>`coalesce(sum(${ledgerHolds.amount}), 0)` })
    .from(ledgerHolds)
    .where(and(eq(ledgerHolds.tenantId, tenantId), eq(ledgerHolds.status, 'open')));
  const balance = Number(entries?.sum ?? 0);
  const held = Number(holds?.sum ?? 0);
  return { balance, held, available: balance - held };
}

export function balanceOf(db: Db, tenantId: string): Promise<Balance> {
  return balanceIn(db, tenantId);
}

/** Adds credits; with an entryKey, repeating the same grant is a no-op. Returns whether it was new. */
export async function grantCredits(
  db: Db,
  input: { tenantId: string; amount: number; entryKey: string; note?: string },
): Promise<boolean> {
  const inserted = await db
    .insert(ledgerEntries)
    .values({ tenantId: input.tenantId, kind: 'grant', amount: input.amount, entryKey: input.entryKey, note: input.note ?? null })
    .onConflictDoNothing({ target: ledgerEntries.entryKey })
    .returning({ id: ledgerEntries.id });
  return inserted.length > 0;
}

/**
 * Holds `amount` for a run step if the tenant's balance and budgets cover it.
 * Repeating it returns the same hold.
 */
export async function reserve(
  db: Db,
  input: { tenantId: string; runId: string; step: string; amount: number; budgetScope?: BudgetScope },
): Promise<ReserveOutcome> {
  return db.transaction(async (tx) => {
    // One reservation at a time per tenant, so two runs cannot both spend the same credits.
    await tx.select({ id: tenants.id }).from(tenants).where(eq(tenants.id, input.tenantId)).for('update');
    const [existing] = await tx
      .select()
      .from(ledgerHolds)
      .where(and(eq(ledgerHolds.runId, input.runId), eq(ledgerHolds.step, input.step)));
    if (existing) return { status: 'held', holdId: existing.id, amount: existing.amount };
    const { available } = await balanceIn(tx, input.tenantId);
    if (available < input.amount) return { status: 'insufficient', required: input.amount, available };
    if (input.budgetScope) {
      const headroom = await budgetHeadroom(tx as unknown as Db, input.tenantId, input.budgetScope);
      if (headroom < input.amount) return { status: 'over_budget', required: input.amount, headroom: Math.max(0, headroom) };
    }
    const [hold] = await tx
      .insert(ledgerHolds)
      .values({ tenantId: input.tenantId, runId: input.runId, step: input.step, amount: input.amount, status: 'open' })
      .returning({ id: ledgerHolds.id });
    return { status: 'held', holdId: hold!.id, amount: input.amount };
  });
}

type Hold = typeof ledgerHolds.$inferSelect;

/**
 * Closes the run step's hold inside a transaction: `close` decides the charge
 * for an open hold; a hold already closed returns its recorded outcome, so
 * settle and release are both idempotent.
 */
async function closeHold(
  db: Db,
  key: { runId: string; step: string },
  close: (tx: Tx, hold: Hold) => Promise<SettleOutcome>,
): Promise<SettleOutcome> {
  return db.transaction(async (tx) => {
    const [hold] = await tx
      .select()
      .from(ledgerHolds)
      .where(and(eq(ledgerHolds.runId, key.runId), eq(ledgerHolds.step, key.step)))
      .for('update');
    if (!hold) return { charged: 0, released: 0 };
    if (hold.status !== 'open') return { charged: hold.chargedAmount ?? 0, released: hold.releasedAmount ?? 0 };
    return close(tx, hold);
  });
}

/** Charges actual usage, bounded by the hold, and releases the rest. */
export function settle(db: Db, input: { runId: string; step: string; actualAmount: number }): Promise<SettleOutcome> {
  return closeHold(db, input, async (tx, hold) => {
    const charged = Math.max(0, Math.min(input.actualAmount, hold.amount));
    if (charged > 0) {
      await tx
        .insert(ledgerEntries)
        .values({ tenantId: hold.tenantId, runId: hold.runId, kind: 'charge', amount: charged, entryKey: `charge:${hold.runId}:${hold.step}` })
        .onConflictDoNothing({ target: ledgerEntries.entryKey });
    }
    const released = hold.amount - charged;
    await tx
      .update(ledgerHolds)
      .set({ status: 'settled', chargedAmount: charged, releasedAmount: released, closedAt: new Date() })
      .where(eq(ledgerHolds.id, hold.id));
    return { charged, released };
  });
}

/** Compensation: releases the whole hold (failure, rejection, cancel). */
export function release(db: Db, input: { runId: string; step: string }): Promise<SettleOutcome> {
  return closeHold(db, input, async (tx, hold) => {
    await tx
      .update(ledgerHolds)
      .set({ status: 'released', chargedAmount: 0, releasedAmount: hold.amount, closedAt: new Date() })
      .where(eq(ledgerHolds.id, hold.id));
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
