// Writes each state change of a run: the API's projection row and one
// content-free journey event, both idempotent under activity retries.
import { log } from '@temporalio/activity';
import type { Db } from '../db/client.ts';
import type { RunTransition } from '../domain/runs/transition.ts';
import { isTerminal } from '../domain/runs/states.ts';
import { journeyEventRecorded, recordJourneyEvent } from '../services/journey.ts';
import { storableJson } from '../domain/storable-text.ts';
import { metrics } from '../services/metrics.ts';
import { moveRun, type RunPatch, recordedState, runAtEnd } from '../services/runs.ts';
import { endingReceipt } from '../domain/runs/ending-receipt.ts';
import type { Plan } from '../domain/planning/plan.ts';
import type { ApprovalRecord, StepResult } from '../domain/runs/run-types.ts';

/** Time in the state the run leaves, the approval wait, and the end: counted once, by the write that made the move. */
function observeMove(before: { status: string; since: Date }, to: string): void {
  const seconds = Math.max(0, (Date.now() - before.since.getTime()) / 1000);
  metrics.runStateDuration.observe({ state: before.status }, seconds);
  if (before.status === 'awaiting_approval') metrics.approvalWait.observe(seconds);
  if (isTerminal(to as Parameters<typeof isTerminal>[0])) metrics.runsEnded.inc({ state: to });
}

/**
 * A run that ends without the receipt verification writes (refused, stopped at planning, rejected,
 * expired, cancelled, failed) gets one computed from what it had; null when it has one already.
 */
async function receiptAtEnd(db: Db, t: RunTransition): Promise<RunPatch['receipt'] | null> {
  if (!isTerminal(t.status) || t.patch.receipt) return null;
  const row = await runAtEnd(db, t.runId);
  if (!row) return null;
  return endingReceipt({
    runId: t.runId,
    input: row.input,
    memory: row.memory,
    status: t.status,
    step: t.step,
    plan: (t.patch.plan ?? row.plan ?? null) as Plan | null,
    results: t.patch.stepResults ?? (row.result as { steps?: StepResult[] } | null)?.steps ?? [],
    approval: (t.patch.approval ?? row.approval ?? null) as ApprovalRecord | null,
    failure: t.patch.failure ?? (row.failure as { code: string; message: string } | null) ?? null,
  });
}

/**
 * Retention is not a run's work: the hourly Schedule purges every tenant's expired events
 * (activities/journey.ts). A purge at each run's end scanned the tenant's events whenever the planner
 * took its (tenant, id) index, as it does for a tenant newer than its statistics: milliseconds of
 * Postgres at every end, growing with the tenant's history (docs/performance.md, row 11).
 */
export function projectionActivities(deps: { db: Db }) {
  return {
    async recordTransition(t: RunTransition): Promise<void> {
      // `completedAt: true` is how transitions scheduled before the typed patch said `completed`.
      const { completed, completedAt, stepResults, ...fields } = t.patch as RunTransition['patch'] & { completedAt?: boolean };
      const patch: RunPatch = { ...fields, status: t.status, currentStep: isTerminal(t.status) ? null : t.step };
      if (completed || completedAt) patch.completedAt = new Date();
      if (stepResults) patch.result = { steps: stepResults };
      if (t.progress) patch.progress = t.progress;
      const receipt = await receiptAtEnd(deps.db, t);
      if (receipt) patch.receipt = receipt;
      // A model's answer or arguments may hold characters Postgres cannot store; they must not strand the run.
      const eventKey = `${t.runId}:${t.seq}`;
      // The state the move leaves, and since when (the time-in-state metrics).
      const left = await moveRun(deps.db, t.runId, storableJson({ ...patch, status: t.status }));
      if (left && left.status !== t.status) observeMove(left, t.status);
      if (!left) {
        // Not written: the table has no move from the recorded state. A retry finds its own move
        // already written; a replay (a worker died before its workflow task completed) runs behind a
        // record that is ahead of it, and leaves it so. Anything else is a bug, refused loudly.
        const from = (await recordedState(deps.db, t.runId))?.status ?? null;
        const writtenBefore = from === t.status || (await journeyEventRecorded(deps.db, eventKey));
        if (!writtenBefore) {
          log.error('illegal run move refused: the record was not written', { runId: t.runId, seq: t.seq, from, to: t.status });
          return;
        }
        if (from !== t.status) return;
      }
      await recordJourneyEvent(deps.db, {
        tenantId: t.tenantId,
        runId: t.runId,
        kind: t.kind,
        state: t.status,
        progress: t.progress ?? null,
        eventKey,
      });
    },
  };
}
