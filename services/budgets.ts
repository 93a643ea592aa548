// Budget policies: per tenant, per scope (runs, chat or all) and period. The
// ledger consults them inside the reservation transaction, so two requests
// cannot both squeeze under the same limit.
import { and, eq, gte, inArray, like, ne, sql } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { budgets, ledgerEntries, ledgerHolds } from '../db/schema.ts';

export type BudgetScope = 'runs' | 'chat';
export type BudgetRow = typeof budgets.$inferSelect;

/** The hold step each scope reserves under. */
const STEP: Record<BudgetScope, string> = { runs: 'reserve', chat: 'chat' };

export function periodStart(period: BudgetRow['period'], now = new Date()): Date {
  if (period === 'day') return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  if (period === 'month') return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  return new Date(0);
}

export async function upsertBudget(db: Db, tenantId: string, b: Pick<BudgetRow, 'name' | 'scope' | 'period' | 'limitCredits'>): Promise<BudgetRow> {
  const [row] = await db
    .insert(budgets)
    .values({ tenantId, ...b })
    .onConflictDoUpdate({
      target: [budgets.tenantId, budgets.name],
      set: { scope: b.scope, period: b.period, limitCredits: b.limitCredits, updatedAt: new Date() },
    })
    .returning();
  return row!;
}

export function listBudgets(db: Db, tenantId: string) {
  return db.select().from(budgets).where(eq(budgets.tenantId, tenantId)).orderBy(budgets.name);
}

/** Credits spent or held in a budget's scope and period (without the hold `excludeHoldId`, the one being checked). */
async function used(db: Db, tenantId: string, budget: BudgetRow, excludeHoldId?: number): Promise<number> {
  const since = periodStart(budget.period);
  const steps = budget.scope === 'all' ? Object.values(STEP) : [STEP[budget.scope]];
  const [charged] = await db
    .select({ sum: sql<string>`coalesce(sum(${ledgerEntries.amount}), 0)` })
    .from(ledgerEntries)
    .where(
      and(
        eq(ledgerEntries.tenantId, tenantId),
        eq(ledgerEntries.kind, 'charge'),
        gte(ledgerEntries.createdAt, since),
        budget.scope === 'all' ? undefined : like(ledgerEntries.entryKey, `%:${STEP[budget.scope]}`),
      ),
    );
  const [held] = await db
    .select({ sum: sql<string>`coalesce(sum(${ledgerHolds.amount}), 0)` })
    .from(ledgerHolds)
    .where(
      and(
        eq(ledgerHolds.tenantId, tenantId),
        eq(ledgerHolds.status, 'open'),
        gte(ledgerHolds.createdAt, since),
        inArray(ledgerHolds.step, steps),
        excludeHoldId === undefined ? undefined : ne(ledgerHolds.id, excludeHoldId),
      ),
    );
  return Number(charged?.sum ?? 0) + Number(held?.sum ?? 0);
}

/** The budgets that apply to `scope` (its own and `all`). */
export async function applicableBudgets(db: Db, tenantId: string, scope: BudgetScope) {
  return (await listBudgets(db, tenantId)).filter((b) => b.scope === scope || b.scope === 'all');
}

/**
 * Smallest room left under `budgets` (applicableBudgets); Infinity when there are none. The ledger's
 * reserve inserts its hold first and passes its id, so the room is what was left before it.
 */
export async function headroomUnder(db: Db, tenantId: string, budgets: Awaited<ReturnType<typeof applicableBudgets>>, excludeHoldId?: number): Promise<number> {
  let room = Number.POSITIVE_INFINITY;
  for (const b of budgets) room = Math.min(room, b.limitCredits - (await used(db, tenantId, b, excludeHoldId)));
  return room;
}
