// The ledger's running balance (tenant_balances) against the entries and holds it
// summarises: after a mixed sequence of grants, reserves (retried and concurrent),
// settlements and releases it equals what summing the whole history gives.
import { randomBytes } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Database, openPostgres } from '../db/client.ts';
import { ledgerEntries, ledgerHolds, tenantBalances } from '../db/schema.ts';
import { upsertBudget } from '../services/budgets.ts';
import { balanceOf, grantCredits, release, reserve, settle, usageSummary } from '../services/ledger.ts';
import { ensureTenant } from '../services/tenants.ts';

let database: Database;

beforeAll(() => {
  database = openPostgres(inject('databaseUrl'), 20);
});
afterAll(() => database.close());

const newTenantId = async () => (await ensureTenant(database.db, `ledger-${randomBytes(4).toString('hex')}`)).id;

/** Balance and holds summed from every entry and open hold: what the running balance must equal. */
async function summed(tenantId: string) {
  const db = database.db;
  const [e] = await db
    .select({ sum: sql<string>`coalesce(sum(case when ${ledgerEntries.kind} = 'grant' then ${ledgerEntries.amount} else -${ledgerEntries.amount} end), 0)` })
    .from(ledgerEntries)
    .where(eq(ledgerEntries.tenantId, tenantId));
  const [h] = await db
    .select({ sum: sql<string>`coalesce(sum(${ledgerHolds.amount}), 0)` })
    .from(ledgerHolds)
    .where(and(eq(ledgerHolds.tenantId, tenantId), eq(ledgerHolds.status, 'open')));
  const balance = Number(e!.sum);
  const held = Number(h!.sum);
  return { balance, held, available: balance - held };
}

/** How many transactions wrote the tenant's rows of a table (rows written by one statement share its transaction id). */
async function transactionsThatWrote(table: 'ledger_holds' | 'ledger_entries', tenantId: string): Promise<number> {
  const { rows } = (await database.db.execute(
    sql`select count(distinct xmin::text)::int as n from ${sql.identifier(table)} where tenant_id = ${tenantId}`,
  )) as unknown as {
    rows: { n: number }[];
  };
  return rows[0]!.n;
}

/** Until at least `n` sessions of this database wait on a lock (held by `by`), polled, bounded: no fixed sleep. */
async function waitingOnLocks(by: pg.Client, n: number, withinMs = 10_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const { rows } = await by.query<{ n: number }>(
      "select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()",
    );
    if (rows[0]!.n >= n) return;
    if (Date.now() > deadline) throw new Error(`fewer than ${n} sessions waited on a lock within ${withinMs} ms`);
    await new Promise((r) => setImmediate(r));
  }
}

describe('the running balance', () => {
  it('equals the sum of entries and open holds after grants, reserves, settles, releases and concurrent reserves', async () => {
    const db = database.db;
    const t = await newTenantId();
    expect(await balanceOf(db, t)).toEqual({ balance: 0, held: 0, available: 0 });

    // A reserve before any credit: insufficient, and nothing is held.
    expect(await reserve(db, { tenantId: t, runId: 'none', step: 'reserve', amount: 5 })).toEqual({ status: 'insufficient', required: 5, available: 0 });
    expect(await db.select().from(ledgerHolds).where(eq(ledgerHolds.tenantId, t))).toEqual([]);

    // Grants, one repeated (idempotent by entry key).
    expect(await grantCredits(db, { tenantId: t, amount: 1_000, entryKey: `${t}:g1` })).toBe(true);
    expect(await grantCredits(db, { tenantId: t, amount: 1_000, entryKey: `${t}:g1` })).toBe(false);
    expect(await grantCredits(db, { tenantId: t, amount: 500, entryKey: `${t}:g2` })).toBe(true);
    expect(await balanceOf(db, t)).toEqual({ balance: 1_500, held: 0, available: 1_500 });

    // A reserve, retried: one hold, counted once.
    const first = await reserve(db, { tenantId: t, runId: `${t}-r1`, step: 'reserve', amount: 300 });
    const retried = await reserve(db, { tenantId: t, runId: `${t}-r1`, step: 'reserve', amount: 300 });
    expect(first).toMatchObject({ status: 'held', amount: 300 });
    expect(retried).toEqual(first);
    expect(await balanceOf(db, t)).toEqual({ balance: 1_500, held: 300, available: 1_200 });

    // Settled for less than held (repeated: idempotent), then another reserve released (repeated).
    expect(await settle(db, { runId: `${t}-r1`, step: 'reserve', actualAmount: 120 })).toEqual({ charged: 120, released: 180 });
    expect(await settle(db, { runId: `${t}-r1`, step: 'reserve', actualAmount: 999 })).toEqual({ charged: 120, released: 180 });
    await reserve(db, { tenantId: t, runId: `${t}-r2`, step: 'chat', amount: 200 });
    expect(await release(db, { runId: `${t}-r2`, step: 'chat' })).toEqual({ charged: 0, released: 200 });
    expect(await release(db, { runId: `${t}-r2`, step: 'chat' })).toEqual({ charged: 0, released: 200 });
    expect(await balanceOf(db, t)).toEqual({ balance: 1_380, held: 0, available: 1_380 });

    // More than is available: insufficient, with what is available.
    expect(await reserve(db, { tenantId: t, runId: `${t}-big`, step: 'reserve', amount: 5_000 })).toEqual({
      status: 'insufficient',
      required: 5_000,
      available: 1_380,
    });

    // 20 concurrent reserves of 100 (each also sent twice) against 1,380: exactly 13 hold.
    const outcomes = await Promise.all(
      Array.from({ length: 40 }, (_, i) => reserve(db, { tenantId: t, runId: `${t}-c${i % 20}`, step: 'reserve', amount: 100 })),
    );
    const held = new Set(outcomes.filter((o) => o.status === 'held').map((o) => (o as { holdId: number }).holdId));
    expect(held.size).toBe(13);
    const holds = await db
      .select()
      .from(ledgerHolds)
      .where(and(eq(ledgerHolds.tenantId, t), eq(ledgerHolds.status, 'open')));
    expect(holds).toHaveLength(13);
    expect(await balanceOf(db, t)).toEqual({ balance: 1_380, held: 1_300, available: 80 });

    // Settle some (each twice at once: a retried activity), release the others, concurrently, with a grant in between.
    const settled = await Promise.all([
      ...holds.flatMap((h, i) =>
        i % 2 === 0 ? [0, 1].map(() => settle(db, { runId: h.runId, step: h.step, actualAmount: 70 })) : [release(db, { runId: h.runId, step: h.step })],
      ),
      grantCredits(db, { tenantId: t, amount: 50, entryKey: `${t}:g3` }),
    ]);
    expect(settled.filter((o) => typeof o === 'object' && o.charged === 70)).toHaveLength(14);
    const charges = await db
      .select()
      .from(ledgerEntries)
      .where(and(eq(ledgerEntries.tenantId, t), eq(ledgerEntries.kind, 'charge')));
    expect(charges.map((c) => c.amount).sort()).toEqual([120, ...Array(7).fill(70)].sort());

    const running = await balanceOf(db, t);
    expect(running).toEqual(await summed(t));
    expect(running).toEqual({ balance: 1_380 + 50 - 7 * 70, held: 0, available: 1_380 + 50 - 7 * 70 });
    expect(await usageSummary(db, t)).toMatchObject(running);
  });

  it("takes a tenant's concurrent reserves together: one statement and commit for those that waited, in arrival order", async () => {
    const db = database.db;
    const t = await newTenantId();
    await grantCredits(db, { tenantId: t, amount: 2_550, entryKey: `${t}:g` });
    // 30 reserves of 100 at once: the first runs alone, the 29 that arrived meanwhile run as one.
    const outcomes = await Promise.all(Array.from({ length: 30 }, (_, i) => reserve(db, { tenantId: t, runId: `${t}-b${i}`, step: 'chat', amount: 100 })));
    expect(outcomes.map((o) => o.status)).toEqual([...Array(25).fill('held'), ...Array(5).fill('insufficient')]);
    expect(outcomes.slice(25)).toEqual(Array(5).fill({ status: 'insufficient', required: 100, available: 50 }));
    expect(await transactionsThatWrote('ledger_holds', t)).toBe(2);
    expect(await balanceOf(db, t)).toEqual({ balance: 2_550, held: 2_500, available: 50 });
    expect(await balanceOf(db, t)).toEqual(await summed(t));
  });

  it("settles a tenant's concurrent settles together, each answered its own outcome, a repeat the first's", async () => {
    const db = database.db;
    const t = await newTenantId();
    await grantCredits(db, { tenantId: t, amount: 10_000, entryKey: `${t}:g` });
    for (let i = 0; i < 20; i++) await reserve(db, { tenantId: t, runId: `${t}-s${i}`, step: 'chat', amount: 100 });
    // 20 settles (the last also repeated with another amount) and one for a hold that does not exist, at once.
    const outcomes = await Promise.all([
      ...Array.from({ length: 20 }, (_, i) => settle(db, { tenantId: t, runId: `${t}-s${i}`, step: 'chat', actualAmount: 10 + i })),
      settle(db, { tenantId: t, runId: `${t}-s19`, step: 'chat', actualAmount: 500 }),
      settle(db, { tenantId: t, runId: `${t}-none`, step: 'chat', actualAmount: 5 }),
    ]);
    expect(outcomes).toEqual([
      ...Array.from({ length: 20 }, (_, i) => ({ charged: 10 + i, released: 90 - i })),
      { charged: 29, released: 71 },
      { charged: 0, released: 0 },
    ]);
    // The grant's transaction, the first settle's, and the one of the settles that waited for it.
    expect(await transactionsThatWrote('ledger_entries', t)).toBe(3);
    const charged = (19 * 20) / 2 + 10 * 20;
    expect(await balanceOf(db, t)).toEqual({ balance: 10_000 - charged, held: 0, available: 10_000 - charged });
    expect(await balanceOf(db, t)).toEqual(await summed(t));
  });

  it('takes locks as every ledger write does, holds first and the balance row last: a reserve meeting a write in progress waits, never deadlocks', async () => {
    const db = database.db;
    const t = await newTenantId();
    await grantCredits(db, { tenantId: t, amount: 1_000, entryKey: `${t}:g` });
    const first = await reserve(db, { tenantId: t, runId: `${t}-x`, step: 'chat', amount: 100 });
    // Another session, as a release does: the hold's row, then (while the retried reserve waits on that row) the balance row.
    const other = new pg.Client({ connectionString: inject('databaseUrl') });
    await other.connect();
    try {
      await other.query('begin');
      await other.query('update ledger_holds set closed_at = null where run_id = $1', [`${t}-x`]);
      const retried = reserve(db, { tenantId: t, runId: `${t}-x`, step: 'chat', amount: 100 });
      const fresh = reserve(db, { tenantId: t, runId: `${t}-y`, step: 'chat', amount: 100 });
      await waitingOnLocks(other, 1);
      await other.query('update tenant_balances set updated_at = now() where tenant_id = $1', [t]);
      await other.query('commit');
      expect(await retried).toEqual(first);
      expect(await fresh).toMatchObject({ status: 'held', amount: 100 });
    } finally {
      await other.end();
    }
    expect(await balanceOf(db, t)).toEqual({ balance: 1_000, held: 200, available: 800 });
  });

  it('never charges more than the hold: a settle past it charges the hold and releases nothing', async () => {
    const db = database.db;
    const t = await newTenantId();
    await grantCredits(db, { tenantId: t, amount: 1_000, entryKey: `${t}:g` });
    await reserve(db, { tenantId: t, runId: `${t}-over`, step: 'reserve', amount: 40 });
    expect(await settle(db, { runId: `${t}-over`, step: 'reserve', actualAmount: 250, usageBasis: 'reported' })).toEqual({ charged: 40, released: 0 });
    const [entry] = await db
      .select()
      .from(ledgerEntries)
      .where(and(eq(ledgerEntries.tenantId, t), eq(ledgerEntries.kind, 'charge')));
    expect(entry).toMatchObject({ amount: 40, usageBasis: 'reported' });
    expect(await balanceOf(db, t)).toEqual({ balance: 960, held: 0, available: 960 });
    expect(await balanceOf(db, t)).toEqual(await summed(t));
  });

  it('orders locks so that concurrent reserve and settle for two runs of one tenant both finish, each exactly once', async () => {
    const db = database.db;
    const t = await newTenantId();
    await grantCredits(db, { tenantId: t, amount: 1_000, entryKey: `${t}:g` });
    await reserve(db, { tenantId: t, runId: `${t}-a`, step: 'reserve', amount: 300 });
    // Another session holds the tenant's balance row, as a write in progress does, while run a settles and run b reserves.
    const other = new pg.Client({ connectionString: inject('databaseUrl') });
    await other.connect();
    try {
      await other.query('begin');
      await other.query('select 1 from tenant_balances where tenant_id = $1 for update', [t]);
      const settling = settle(db, { runId: `${t}-a`, step: 'reserve', actualAmount: 120 });
      const reserving = reserve(db, { tenantId: t, runId: `${t}-b`, step: 'reserve', amount: 500 });
      await waitingOnLocks(other, 2);
      await other.query('commit');
      expect(await settling).toEqual({ charged: 120, released: 180 });
      expect(await reserving).toMatchObject({ status: 'held', amount: 500 });
    } finally {
      await other.end();
    }
    expect(await balanceOf(db, t)).toEqual({ balance: 880, held: 500, available: 380 });
    expect(await balanceOf(db, t)).toEqual(await summed(t));
  });

  it('undoes a batched reserve whose balance moved under it (the division by zero): no hold without its credits', async () => {
    const db = database.db;
    const t = await newTenantId();
    await grantCredits(db, { tenantId: t, amount: 1_000, entryKey: `${t}:g` });
    // The statement reads the room (1,000), then its update waits on the balance row while another session takes 900 of it.
    const other = new pg.Client({ connectionString: inject('databaseUrl') });
    await other.connect();
    try {
      await other.query('begin');
      await other.query('update tenant_balances set held = held + 900 where tenant_id = $1', [t]);
      const reserving = reserve(db, { tenantId: t, runId: `${t}-moved`, step: 'reserve', amount: 500 });
      await waitingOnLocks(other, 1);
      await other.query('commit');
      // The batch is undone (SQLSTATE 22012) and the transactional path decides: not covered any more.
      expect(await reserving).toEqual({ status: 'insufficient', required: 500, available: 100 });
    } finally {
      await other.end();
    }
    const holds = await db
      .select()
      .from(ledgerHolds)
      .where(eq(ledgerHolds.runId, `${t}-moved`));
    expect(holds).toEqual([]);
    expect(await balanceOf(db, t)).toEqual({ balance: 1_000, held: 900, available: 100 });
  });

  it('keeps the budget check: a reserve over a budget is refused and holds nothing', async () => {
    const db = database.db;
    const t = await newTenantId();
    await grantCredits(db, { tenantId: t, amount: 10_000, entryKey: `${t}:g` });
    await upsertBudget(db, t, { name: 'runs-total', scope: 'runs', period: 'total', limitCredits: 250 });
    expect(await reserve(db, { tenantId: t, runId: `${t}-a`, step: 'reserve', amount: 200, budgetScope: 'runs' })).toMatchObject({ status: 'held' });
    expect(await reserve(db, { tenantId: t, runId: `${t}-b`, step: 'reserve', amount: 100, budgetScope: 'runs' })).toEqual({
      status: 'over_budget',
      required: 100,
      headroom: 50,
    });
    // Exactly the headroom still fits; concurrent reserves cannot both squeeze under it.
    const both = await Promise.all([
      reserve(db, { tenantId: t, runId: `${t}-c`, step: 'reserve', amount: 50, budgetScope: 'runs' }),
      reserve(db, { tenantId: t, runId: `${t}-d`, step: 'reserve', amount: 50, budgetScope: 'runs' }),
    ]);
    expect(both.map((o) => o.status).sort()).toEqual(['held', 'over_budget']);
    expect(await balanceOf(db, t)).toEqual({ balance: 10_000, held: 250, available: 9_750 });
    expect(await balanceOf(db, t)).toEqual(await summed(t));
  });

  it('has a row per tenant that had a ledger write, read by the usage summary', async () => {
    const db = database.db;
    const t = await newTenantId();
    await grantCredits(db, { tenantId: t, amount: 42, entryKey: `${t}:g` });
    const [row] = await db.select().from(tenantBalances).where(eq(tenantBalances.tenantId, t));
    expect(row).toMatchObject({ balance: 42, held: 0 });
    expect(await usageSummary(db, t)).toMatchObject({ balance: 42, held: 0, available: 42 });
  });
});
