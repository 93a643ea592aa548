// The record of server tool calls (db/schema.ts toolCalls): claimed before a call is sent,
// completed after. It is what makes an external call happen at most once across retries,
// worker crashes and replays.
import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { toolCalls } from '../db/schema.ts';
import type { EffectClass } from '../domain/tools.ts';

export interface CallKey {
  tenantId: string;
  runId: string;
  stepId: string;
  argsDigest: string;
}

export type Claim = { kind: 'claimed' } | { kind: 'started_before' } | { kind: 'done_before'; isError: boolean; result: unknown; resultDigest: string };

const where = (k: CallKey) => and(eq(toolCalls.runId, k.runId), eq(toolCalls.stepId, k.stepId), eq(toolCalls.argsDigest, k.argsDigest));

/**
 * Records the call as started, unless an earlier attempt did: then says how far that one got. The
 * insert commits before the call is sent, so a crash at any later line leaves `started` behind.
 */
export async function claimToolCall(db: Db, key: CallKey, tool: string, effect: EffectClass): Promise<Claim> {
  const inserted = await db
    .insert(toolCalls)
    .values({ ...key, tool, effect, status: 'started' })
    .onConflictDoNothing()
    .returning({ status: toolCalls.status });
  if (inserted.length > 0) return { kind: 'claimed' };
  const [row] = await db.select().from(toolCalls).where(where(key));
  if (row?.status === 'done') return { kind: 'done_before', isError: row.isError ?? false, result: row.result, resultDigest: row.resultDigest ?? '' };
  return { kind: 'started_before' };
}

/** Takes a claim back when nothing was sent (the server was not connected), so a retry may send. */
export async function releaseToolCall(db: Db, key: CallKey): Promise<void> {
  await db.delete(toolCalls).where(and(where(key), eq(toolCalls.status, 'started')));
}

export async function completeToolCall(db: Db, key: CallKey, outcome: { isError: boolean; result: unknown; resultDigest: string }): Promise<void> {
  await db
    .update(toolCalls)
    .set({ status: 'done', isError: outcome.isError, result: outcome.result, resultDigest: outcome.resultDigest, doneAt: sql`now()` })
    .where(where(key));
}
