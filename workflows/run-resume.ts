// Upgrade at continue-as-new: a run's workflow is PINNED to the build it started on (docs/operations.md,
// "Deploys"), so a run that waits days for its approval would hold that build's workers for days. When a
// deploy makes another build its target, the waiting run continues as new onto it, carrying everything it
// had decided so far; the new execution starts straight at the wait, with the same deadline.
import { makeContinueAsNewFunc, workflowInfo } from '@temporalio/workflow';
import type { ModelId } from '../domain/models.ts';
import type { Plan } from '../domain/planning/plan.ts';
import type { AgentRunInput } from '../domain/runs/run-input.ts';
import type { ApprovalRecord } from '../domain/runs/run-types.ts';
import type { ChatMessage } from '../domain/chat/types.ts';
import type { StepResult } from '../domain/runs/run-types.ts';
import type { Prepared } from './agent-loop.ts';
import type { PendingEffect } from './run-details.ts';
import type { acts } from './run-activities.ts';

export type Estimate = Awaited<ReturnType<typeof acts.estimateRun>>;
export type Reservation = { amount: number; status: 'held' };

/** What a run awaiting approval carries into its next execution: hold, plan, approval request (its digests and deadline), counters. */
export interface ApprovalWait {
  estimate: Estimate;
  model: ModelId;
  reservation: Reservation;
  plan: Plan;
  approval: ApprovalRecord;
  pending: PendingEffect[];
  /** The projection's last transition number: the next execution's moves follow it. */
  seq: number;
  /** Approval signals taken so far: their audit keys stay unique across executions. */
  signals: number;
  /** The reads and answers done before the wait (workflows/run-phases.ts, preparePhase); absent when none were. */
  prepared?: Prepared;
  /** A tool-calling run (workflows/tool-calling.ts): its loop so far; it waits for round `toolLoop.round`. */
  toolLoop?: ToolLoop;
}

/** Everything a tool-calling run has done so far: what a run waiting for a round carries into its next execution. */
export interface ToolLoop {
  transcript: ChatMessage[];
  results: StepResult[];
  /** The approval round last asked for (0: none yet). */
  round: number;
  /** The model turns taken. */
  turn: number;
  counts: { reads: number; external: number; refused: number };
  /** Characters of tool results the model may still be shown (the estimate's tool_results_tokens_max). */
  shownLeft: number;
}

/** Whether the server says this execution's pinned build is no longer its target (a newer build is current or ramping to it). */
export function newerBuildIsTarget(): boolean {
  return workflowInfo().targetWorkerDeploymentVersionChanged === true;
}

/** Ends this execution and starts the next on the target build (AUTO_UPGRADE for its first task; it is PINNED there after). */
export function continueOnTargetBuild(run: AgentRunInput, wait: ApprovalWait): Promise<never> {
  return makeContinueAsNewFunc<(run: AgentRunInput) => Promise<unknown>>({ initialVersioningBehavior: 'AUTO_UPGRADE' })({ ...run, resume: wait });
}
