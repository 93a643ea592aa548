// Messages of the agent-run workflow, shared by the workflow and its callers
// (the API and operators), in one file as in the Temporal samples.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { RunStatus, RunStep } from '../domain/runs/states.ts';

export interface ApprovalDecision {
  decision: 'approve' | 'reject';
  reason?: string;
  /** The argument digests the approver saw: a digest that is not a current one makes the decision stale (refused). */
  digests?: string[];
  /** Arguments edited at approval, checked against the tool's schema by the API, which alone may send them. */
  edits?: { step_id: string; arguments: Record<string, unknown>; args_digest: string }[];
}

/**
 * What the audit records of a decision, and what a repeated Idempotency-Key's body is compared by:
 * the decision, its reason, the digests it named and the digests of edited arguments; never argument values.
 */
export function decisionSubject(d: ApprovalDecision) {
  return {
    decision: d.decision,
    reason: d.reason,
    ...(d.digests ? { digests: d.digests } : {}),
    ...(d.edits ? { edits: d.edits.map((e) => ({ step_id: e.step_id, args_digest: e.args_digest })) } : {}),
  };
}

/** The Update validator's refusal of a decision that names an argument digest no pending effect has. */
export const STALE_APPROVAL = 'StaleApproval';

/**
 * Sent by the API with its Update: who decided, as the API authenticated them (an approver key's id
 * and its person's name), never what the caller wrote. Absent when an operator sends the Update
 * through Temporal: that decision counts as the approver `temporal`.
 */
export interface ApprovalMeta {
  channel: 'api';
  key_id: string | null;
  /** Absent from Updates the API sent before approver keys. */
  name?: string;
}

/** The Update validator's refusal of an approver whose approval already counts on every pending effect. */
export const ALREADY_APPROVED = 'AlreadyApproved';

/** The Update validator's refusal of an approver whom no pending effect's policy allows. */
export const APPROVER_NOT_ALLOWED = 'ApproverNotAllowed';

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
/**
 * A deploy's nudge (`npm run deploy -- ramp|promote` sends it to every run awaiting approval): the run
 * wakes, and if its pinned build is no longer its target it moves to the new build by continue-as-new
 * (workflows/run-resume.ts). A run that is on its target build just goes on waiting.
 */
export const upgradeCheckSignal = defineSignal('upgrade-check');

/** ApplicationFailure type of a webhook delivery attempt that provably sent nothing (activities/tools.ts). */
export const WEBHOOK_NOT_SENT = 'WebhookNotSent';

/** ApplicationFailure type of a tool server call that sent nothing (its server was not connected; activities/server-tool.ts). */
export const TOOL_NOT_SENT = 'ToolCallNotSent';

/** ApplicationFailure type the update validator throws; the API maps it to 409. */
export const NOT_AWAITING_APPROVAL = 'NotAwaitingApproval';
