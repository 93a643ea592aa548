// Messages of the agent-run workflow, shared by the workflow and its callers
// (the API and operators), in one file as in the Temporal samples.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { RunStatus, RunStep } from '../domain/runs/states.ts';

export interface ApprovalDecision {
  decision: 'approve' | 'reject';
  reason?: string;
}

/** Sent by the API with its Update: who decided. Absent when an operator sends the Update through Temporal. */
export interface ApprovalMeta {
  channel: 'api';
  key_id: string | null;
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

/**
 * The approval: a Temporal Update, rejected by its validator unless the run awaits approval and the
 * decision is approve or reject. Used by the API and by operators (`temporal workflow update execute
 * --name approval --input '{"decision":"approve","reason":"…"}'`). Every applied decision is audited.
 */
export const approvalUpdate = defineUpdate<ApprovalOutcome, [ApprovalDecision, ApprovalMeta?]>('approval');
/**
 * The same decision as a signal. A signal cannot be refused to its sender, so one that is malformed
 * (a typo such as "approved") or arrives when no decision is awaited is ignored and audited as
 * run.approval.signal_refused; prefer the Update, which answers with the refusal.
 */
export const approvalSignal = defineSignal<[ApprovalDecision]>('approval');
export const stateQuery = defineQuery<RunLiveState>('state');

/** ApplicationFailure type of a webhook delivery attempt that provably sent nothing (activities/tools.ts). */
export const WEBHOOK_NOT_SENT = 'WebhookNotSent';

/** ApplicationFailure type the update validator throws; the API maps it to 409. */
export const NOT_AWAITING_APPROVAL = 'NotAwaitingApproval';
