// Every chat hold ends, even when the API process holding it does not. Each
// API process registers itself as an instance with a lease it renews; its
// chat holds name it as their owner. A sweeper in every API process releases,
// with an audit record, the open chat holds whose owner's lease has lapsed (the
// process died: kill -9, a crash, a lost machine) or that are older than the
// longest a chat may run (a settle and its release that both failed). Sweepers
// of several replicas may meet the same hold: release locks it and is
// idempotent, so it is released and audited once.
import { randomBytes } from 'node:crypto';
import { and, eq, inArray, isNotNull, lt, or, sql } from 'drizzle-orm';
import type { Logger } from 'pino';
import type { Db } from '../db/client.ts';
import { ledgerHolds, serviceInstances } from '../db/schema.ts';
import { recordAuditOnce } from './audit.ts';
import { release } from './ledger.ts';

/** The hold step chat reserves under (services/chat/completions.ts). */
export const CHAT_HOLD_STEP = 'chat';

export interface SweeperTiming {
  /** How long an instance counts as alive after its last renewal. */
  leaseMs: number;
  /** How often the lease is renewed (well under leaseMs). */
  renewMs: number;
  /** How often holds are swept (also once at start). */
  sweepMs: number;
  /** The longest a chat may run; an open chat hold older than this is released whoever owns it. */
  maxChatMs: number;
}

export const DEFAULT_SWEEPER_TIMING: Omit<SweeperTiming, 'maxChatMs'> = { leaseMs: 30_000, renewMs: 10_000, sweepMs: 60_000 };

export function newInstanceId(): string {
  return `api_${randomBytes(8).toString('hex')}`;
}

/** Registers or renews `instanceId`'s lease. */
export async function renewLease(db: Db, instanceId: string, leaseMs: number): Promise<void> {
  const until = sql`now() + ${`${leaseMs} milliseconds`}::interval`;
  await db
    .insert(serviceInstances)
    .values({ id: instanceId, leaseUntil: until as unknown as Date })
    .onConflictDoUpdate({ target: serviceInstances.id, set: { leaseUntil: until as unknown as Date } });
}

/** Ends `instanceId`'s lease at once (a clean stop): its holds, if any were left, are swept on the next pass. */
export async function endLease(db: Db, instanceId: string): Promise<void> {
  await db.delete(serviceInstances).where(eq(serviceInstances.id, instanceId));
}

export interface SweptHold {
  runId: string;
  tenantId: string;
  amount: number;
  why: 'owner_gone' | 'too_old';
}

const olderThan = (ms: number) => lt(ledgerHolds.createdAt, sql`now() - ${`${ms} milliseconds`}::interval`);

/**
 * Open chat holds whose owner is gone or that outlived any chat. A hold younger than a lease is never
 * taken for its owner's sake: its owner may have reserved it before its first renewal was written.
 */
async function strandedHolds(db: Db, t: Pick<SweeperTiming, 'leaseMs' | 'maxChatMs'>): Promise<SweptHold[]> {
  const ownerAlive = sql`exists (select 1 from ${serviceInstances} i where i.id = ${ledgerHolds.owner} and i.lease_until > now())`;
  const tooOld = olderThan(t.maxChatMs);
  const rows = await db
    .select({ runId: ledgerHolds.runId, tenantId: ledgerHolds.tenantId, amount: ledgerHolds.amount, tooOld: sql<boolean>`${tooOld}` })
    .from(ledgerHolds)
    .where(
      and(
        eq(ledgerHolds.status, 'open'),
        eq(ledgerHolds.step, CHAT_HOLD_STEP),
        or(tooOld, and(isNotNull(ledgerHolds.owner), olderThan(t.leaseMs), sql`not ${ownerAlive}`)),
      ),
    )
    .limit(1_000);
  return rows.map((r) => ({ runId: r.runId, tenantId: r.tenantId, amount: r.amount, why: r.tooOld ? 'too_old' : 'owner_gone' }));
}

/** Releases every stranded chat hold, each with one audit record. Returns what it released. */
export async function sweepHolds(db: Db, timing: Pick<SweeperTiming, 'leaseMs' | 'maxChatMs'>): Promise<SweptHold[]> {
  const released: SweptHold[] = [];
  for (const hold of await strandedHolds(db, timing)) {
    const outcome = await release(db, { runId: hold.runId, step: CHAT_HOLD_STEP, closedBy: 'sweeper' });
    // Another sweeper, or the owner itself, may have closed it meanwhile: only a release by this one is audited.
    if (outcome.released !== hold.amount || outcome.charged !== 0 || !(await releasedBySweeper(db, hold.runId))) continue;
    await recordAuditOnce(db, {
      tenantId: hold.tenantId,
      keyId: null,
      action: 'ledger.hold.released',
      target: `chat:${hold.runId}`,
      subject: { amount: hold.amount, why: hold.why },
      eventKey: `hold-sweep:${hold.runId}:${CHAT_HOLD_STEP}`,
    });
    released.push(hold);
  }
  return released;
}

async function releasedBySweeper(db: Db, runId: string): Promise<boolean> {
  const [row] = await db
    .select({ closedBy: ledgerHolds.closedBy })
    .from(ledgerHolds)
    .where(and(eq(ledgerHolds.runId, runId), eq(ledgerHolds.step, CHAT_HOLD_STEP), inArray(ledgerHolds.status, ['released'])));
  return row?.closedBy === 'sweeper';
}

export interface HoldSweeper {
  instanceId: string;
  /** Stops renewing and sweeping, and ends the lease. */
  stop(): Promise<void>;
}

/**
 * Keeps this API process's lease and sweeps stranded chat holds on start and every sweepMs. A
 * database that is down only delays it: failures are logged once per outage, and it tries again.
 */
export function startHoldSweeper(db: Db, logger: Logger, timing: SweeperTiming, instanceId = newInstanceId()): HoldSweeper {
  let failing = false;
  const guarded = (what: string, work: () => Promise<unknown>) => async () => {
    try {
      await work();
      if (failing) logger.info({ instance: instanceId }, 'hold sweeper: database reachable again');
      failing = false;
    } catch (err) {
      if (!failing) logger.warn({ instance: instanceId, what, err: (err as Error).message }, 'hold sweeper: database unreachable, will try again');
      failing = true;
    }
  };
  const renew = guarded('renew', () => renewLease(db, instanceId, timing.leaseMs));
  const sweep = guarded('sweep', async () => {
    const released = await sweepHolds(db, timing);
    const credits = released.reduce((sum, h) => sum + h.amount, 0);
    if (released.length) logger.warn({ holds: released.length, credits }, 'hold sweeper: released chat holds whose process is gone or that outlived any chat');
  });
  const started = renew().then(sweep);
  const renewTimer = setInterval(renew, timing.renewMs).unref();
  const sweepTimer = setInterval(sweep, timing.sweepMs).unref();
  return {
    instanceId,
    async stop() {
      clearInterval(renewTimer);
      clearInterval(sweepTimer);
      await started;
      await endLease(db, instanceId).catch(() => {});
    },
  };
}
