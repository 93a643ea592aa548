// Messages of the agent-run workflow, shared by the workflow and its callers
// (the API and operators), in one file as in the Temporal samples.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { RunStatus, RunStep } from '../domain/runs/states.ts';

export interface ApprovalDecision {
  decision: 'approve' | 'reject';
  reason?: string;
}

export interface ApprovalOutcome {
  decision: 'approve' | 'reject';
  accepted: true;
}

/** Live state returned by the `state` query (what the Temporal UI's query tab shows). */
export interface RunLiveState {
  status: RunStatus;
  step: RunStep;
  currentPlanStep: string | null;
  approval: 'none' | 'pending' | 'approved' | 'rejected' | 'expired';
  stepsDone: number;
  stepsTotal: number;
}

/** The API's approval: a Temporal Update, rejected by its validator unless the run awaits approval. */
export const approvalUpdate = defineUpdate<ApprovalOutcome, [ApprovalDecision]>('approval');
/** The same decision as a signal, for operators: `temporal workflow signal --name approval --input '{"decision":"approve"}'`. */
export const approvalSignal = defineSignal<[ApprovalDecision]>('approval');
export const stateQuery = defineQuery<RunLiveState>('state');

/** ApplicationFailure type of a webhook delivery attempt that provably sent nothing (activities/tools.ts). */
export const WEBHOOK_NOT_SENT = 'WebhookNotSent';

/** ApplicationFailure type the update validator throws; the API maps it to 409. */
export const NOT_AWAITING_APPROVAL = 'NotAwaitingApproval';
