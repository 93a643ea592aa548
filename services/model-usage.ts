// What a run's model calls cost, and what its hold still covers. Written once
// per call key, so a retried activity cannot charge a call twice.
import { and, eq, ne, sql } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { ledgerHolds, runModelCalls } from '../db/schema.ts';

export interface ModelCallRecord {
  tenantId: string;
  runId: string;
  callKey: string;
  model: string;
  promptTokens: number;
  completionTokens: number;
  credits: number;
}

export interface ModelUsage {
  calls: number;
  promptTokens: number;
  completionTokens: number;
  credits: number;
}

/** Records a call's usage; a second record under the same key is ignored. */
export async function recordModelCall(db: Db, call: ModelCallRecord): Promise<void> {
  await db.insert(runModelCalls).values(call).onConflictDoNothing({ target: [runModelCalls.runId, runModelCalls.callKey] });
}

/** The run's recorded model usage; `exceptCall` leaves out one call (a retry of it must not count itself). */
export async function modelUsageOf(db: Db, runId: string, exceptCall?: string): Promise<ModelUsage> {
  const [row] = await db
    .select({
      calls: sql<string>`count(*)`,
      promptTokens: sql<string>`coalesce(sum(${runModelCalls.promptTokens}), 0)`,
      completionTokens: sql<string>`coalesce(sum(${runModelCalls.completionTokens}), 0)`,
      credits: sql<string>`coalesce(sum(${runModelCalls.credits}), 0)`,
    })
    .from(runModelCalls)
    .where(exceptCall ? and(eq(runModelCalls.runId, runId), ne(runModelCalls.callKey, exceptCall)) : eq(runModelCalls.runId, runId));
  return { calls: Number(row?.calls ?? 0), promptTokens: Number(row?.promptTokens ?? 0), completionTokens: Number(row?.completionTokens ?? 0), credits: Number(row?.credits ?? 0) };
}

/** The amount the run's hold reserved (0 when it has none). */
export async function heldFor(db: Db, runId: string, step: string): Promise<number> {
  const [hold] = await db
    .select({ amount: ledgerHolds.amount })
    .from(ledgerHolds)
    .where(and(eq(ledgerHolds.runId, runId), eq(ledgerHolds.step, step)));
  return hold?.amount ?? 0;
}
