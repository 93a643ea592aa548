// Writes each state change of a run: the API's projection row and one
// content-free journey event, both idempotent under activity retries.
import type { Db } from '../db/client.ts';
import type { RunStatus, RunStep } from '../domain/runs/states.ts';
import { isTerminal } from '../domain/runs/states.ts';
import { purgeJourneyEvents, recordJourneyEvent } from '../services/journey.ts';
import { type RunPatch, updateRun } from '../services/runs.ts';

export interface TransitionInput {
  runId: string;
  tenantId: string;
  /** Position of this change in the run; with runId it keys the journey event. */
  seq: number;
  status: RunStatus;
  step: RunStep;
  kind: string;
  /** Projection fields to set; `completedAt: true` stamps the end time. */
  patch: Record<string, unknown>;
}

export function projectionActivities(deps: { db: Db; journeyRetentionDays: number }) {
  return {
    async recordTransition(t: TransitionInput): Promise<void> {
      const { completedAt, stepResults, ...rest } = t.patch;
      const patch: RunPatch = { ...(rest as RunPatch), status: t.status, currentStep: isTerminal(t.status) ? null : t.step };
      if (completedAt) patch.completedAt = new Date();
      if (stepResults) patch.result = { steps: stepResults };
      await updateRun(deps.db, t.runId, patch);
      await recordJourneyEvent(deps.db, {
        tenantId: t.tenantId,
        runId: t.runId,
        kind: t.kind,
        state: t.status,
        eventKey: `${t.runId}:${t.seq}`,
      });
      if (isTerminal(t.status)) await purgeJourneyEvents(deps.db, t.tenantId, deps.journeyRetentionDays);
    },
  };
}
