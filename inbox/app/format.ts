// How times, money and states read on the page.
import type { Run, RunState } from './types.ts';

/** "23 h 59 min left", "4 min 10 s left", "expired". */
export function timeLeft(deadline: string, now: number): string {
  const s = Math.floor((Date.parse(deadline) - now) / 1_000);
  if (!(s > 0)) return 'expired';
  const h = Math.floor(s / 3_600);
  const m = Math.floor((s % 3_600) / 60);
  if (h > 0) return `${h} h ${m} min left`;
  return m > 0 ? `${m} min ${s % 60} s left` : `${s} s left`;
}

/** What the run holds, or would hold: "70 credits held". */
export function holdOf(run: Run): string {
  if (run.reservation?.status === 'held' && run.reservation.amount !== undefined) return `${run.reservation.amount} credits held`;
  if (run.usage) return `${run.usage.charged} credits charged`;
  return run.estimate ? `${run.estimate.amounts.total} credits estimated` : 'no estimate yet';
}

const STATE_WORDS: Record<RunState, string> = {
  accepted: 'accepted',
  planning: 'planning',
  awaiting_approval: 'awaiting approval',
  executing: 'executing',
  verifying: 'verifying',
  completed: 'completed',
  failed: 'failed',
  needs_attention: 'needs attention',
};

export const stateWords = (state: RunState) => STATE_WORDS[state] ?? state;

export const effectCount = (run: Run) => {
  const n = run.approval?.effects.length ?? 0;
  return `${n} effect${n === 1 ? '' : 's'}`;
};

/** Arguments as the operator reads them: indented JSON, exactly the values that will be sent. */
export const argumentsText = (args: Record<string, unknown> | undefined) => JSON.stringify(args ?? {}, null, 2);
