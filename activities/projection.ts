// Writes each state change of a run: the API's projection row and one
// content-free journey event, both idempotent under activity retries.
import type { Db } from '../db/client.ts';
import type { RunTransition } from '../domain/runs/transition.ts';
import { isTerminal } from '../domain/runs/states.ts';
import { purgeJourneyEvents, recordJourneyEvent } from '../services/journey.ts';
import { storableJson } from '../domain/storable-text.ts';
import { type RunPatch, updateRun } from '../services/runs.ts';

export function projectionActivities(deps: { db: Db; journeyRetentionDays: number }) {
  return {
    async recordTransition(t: RunTransition): Promise<void> {
      // `completedAt: true` is how transitions scheduled before the typed patch said `completed`.
      const { completed, completedAt, stepResults, ...fields } = t.patch as RunTransition['patch'] & { completedAt?: boolean };
      const patch: RunPatch = { ...fields, status: t.status, currentStep: isTerminal(t.status) ? null : t.step };
      if (completed || completedAt) patch.completedAt = new Date();
      if (stepResults) patch.result = { steps: stepResults };
      if (t.progress) patch.progress = t.progress;
      // A model's answer or arguments may hold characters Postgres cannot store; they must not strand the run.
      await updateRun(deps.db, t.runId, storableJson(patch));
      await recordJourneyEvent(deps.db, {
        tenantId: t.tenantId,
        runId: t.runId,
        kind: t.kind,
        state: t.status,
        progress: t.progress ?? null,
        eventKey: `${t.runId}:${t.seq}`,
      });
      if (isTerminal(t.status)) await purgeJourneyEvents(deps.db, t.tenantId, deps.journeyRetentionDays);
    },
  };
}
