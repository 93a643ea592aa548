// The seam between a run's workflow and its row: each state change the
// workflow makes is one typed transition, which the projection activity
// writes (idempotently, keyed by run and seq) with a content-free journey event.
import type { Plan } from '../planning/plan.ts';
import type { ActualUsage, UsageEstimate } from '../pricing.ts';
import type { CompletionReceipt } from '../receipt.ts';
import type { ApprovalRecord, StepResult } from './run-types.ts';
import type { RunProgress } from './progress.ts';
import type { RunStatus, RunStep } from './states.ts';
import type { RunResult } from './verification.ts';

/** Fields of the run's row a transition sets; absent fields are left as they are. */
export interface RunProjectionPatch {
  estimate?: UsageEstimate;
  reservation?: { amount?: number; status: 'held' | 'settled' | 'released' };
  plan?: Plan;
  approval?: ApprovalRecord | null;
  /** Step results so far, while executing (written as `result.steps`). */
  stepResults?: StepResult[];
  result?: RunResult;
  receipt?: CompletionReceipt;
  usage?: ActualUsage & { charged: number; released: number };
  failure?: { code: string; message: string } | null;
  /** The run reached a terminal state: stamps completed_at. */
  completed?: boolean;
}

export interface RunTransition {
  runId: string;
  tenantId: string;
  /** Position of this change in the run; with runId it keys the journey event. */
  seq: number;
  status: RunStatus;
  step: RunStep;
  /** Journey event kind: run.<state>, run.step.<step> or run.step_finished. */
  kind: string;
  patch: RunProjectionPatch;
  /** Progress after this change; absent in transitions scheduled before progress was recorded. */
  progress?: RunProgress;
}
