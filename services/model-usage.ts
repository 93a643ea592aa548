// What a run's model calls cost, and what its hold still covers. Written once
// per call key, so a retried activity cannot charge a call twice.
import { and, eq, ne, sql } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { ledgerHolds, runModelCalls } from '../db/schema.ts';
import { creditsOfMicro, type UsageBasis } from '../domain/pricing.ts';

export interface ModelCallRecord {
  tenantId: string;
  runId: string;
  callKey: string;
  model: string;
  promptTokens: number;
  completionTokens: number;
  /** The exact cost, in micro-credits. */
  costMicro: number;
  /** Whether the provider reported the usage or it was estimated. */
  usageBasis: 'reported' | 'estimated';
}

export interface ModelUsage {
  calls: number;
  promptTokens: number;
  completionTokens: number;
  /** The calls' exact costs summed, in micro-credits (round once: creditsOfMicro). */
  costMicro: number;
  /** Calls whose usage was estimated because the provider reported none. */
  estimatedCalls: number;
}

/** How a set of calls' usage was known. */
export function basisOf(usage: Pick<ModelUsage, 'calls' | 'estimatedCalls'>): UsageBasis {
  if (usage.estimatedCalls === 0) return 'reported';
  return usage.estimatedCalls === usage.calls ? 'estimated' : 'mixed';
}

/** Records a call's usage; a second record under the same key is ignored. */
export async function recordModelCall(db: Db, call: ModelCallRecord): Promise<void> {
  await db
    .insert(runModelCalls)
    .values({ ...call, credits: creditsOfMicro(call.costMicro) })
    .onConflictDoNothing({ target: [runModelCalls.runId, runModelCalls.callKey] });
}

/** The run's recorded model usage; `exceptCall` leaves out one call (a retry of it must not count itself). */
export async function modelUsageOf(db: Db, runId: string, exceptCall?: string): Promise<ModelUsage> {
  const [row] = await db
    .select({
      calls: sql<string>`count(*)`,
      promptTokens: sql<string>`coalesce(sum(${runModelCalls.promptTokens}), 0)`,
      completionTokens: sql<string>`coalesce(sum(${runModelCalls.completionTokens}), 0)`,
      costMicro: sql<string>`coalesce(sum(${runModelCalls.costMicro}), 0)`,
      estimatedCalls: sql<string>`count(*) filter (where ${runModelCalls.usageBasis} = 'estimated')`,
    })
    .from(runModelCalls)
    .where(exceptCall ? and(eq(runModelCalls.runId, runId), ne(runModelCalls.callKey, exceptCall)) : eq(runModelCalls.runId, runId));
  return {
    calls: Number(row?.calls ?? 0),
    promptTokens: Number(row?.promptTokens ?? 0),
    completionTokens: Number(row?.completionTokens ?? 0),
    costMicro: Number(row?.costMicro ?? 0),
    estimatedCalls: Number(row?.estimatedCalls ?? 0),
  };
}

/** The amount the run's hold reserved (0 when it has none). */
export async function heldFor(db: Db, runId: string, step: string): Promise<number> {
  const [hold] = await db
    .select({ amount: ledgerHolds.amount })
    .from(ledgerHolds)
    .where(and(eq(ledgerHolds.runId, runId), eq(ledgerHolds.step, step)));
  return hold?.amount ?? 0;
}
