// Shapes that cross the workflow/activity boundary and feed verification
// (types only; the workflow imports nothing else from here).

/**
 * One external step an approval decides. A server tool's step shows exactly the call it approves:
 * the server, the tool, the arguments and their digest (an approval may name the digests it
 * approves; a stale one is refused).
 */
export interface ApprovalEffect {
  step_id: string;
  tool: string;
  why: string;
  server?: string;
  server_tool?: string;
  arguments?: Record<string, unknown>;
  args_digest?: string;
  /** Set when a person edited the arguments at approval: the digest of what the model proposed. */
  proposed_digest?: string;
  /** A delivery that sends an earlier action's result: that action, whose answer is written after approval. */
  message_from?: { action: number; request: string };
  /** Distinct approvers this effect needs (its approval policy); 1 when absent. */
  required?: number;
  /** The approver keys whose approval counts for it (its approval policy); absent: any approver key of the tenant. */
  allowed_approvers?: string[];
  /** The approvers whose approval counts for these exact arguments (an edit voids the earlier ones). */
  approved_by?: Approver[];
}

/** Who decided: the approver key the API authenticated (its id and its person's name), or the Temporal channel. */
export interface Approver {
  /** Null for a decision sent through Temporal (name `temporal`). */
  key_id: string | null;
  name: string;
}

/** One decision on a pending approval, as the run shows it: who, what, when and why. */
export interface ApprovalVote {
  by: Approver;
  decision: 'approve' | 'reject';
  reason: string | null;
  at: string;
  channel: 'api' | 'temporal:update' | 'temporal:signal';
  /** The effects whose arguments this decision edited (their earlier approvals no longer count). */
  edited?: string[];
}

export interface ApprovalRecord {
  /** cancelled: the run was cancelled before anyone decided. */
  state: 'pending' | 'approved' | 'rejected' | 'expired' | 'cancelled';
  effects: ApprovalEffect[];
  reason: string;
  deadline: string;
  /** Tool-calling runs: which approval round this is, from 1. */
  round?: number;
  decided_at: string | null;
  decision_reason: string | null;
  /** Every decision taken on this round, in order. */
  approvals?: ApprovalVote[];
  /** Approvals still needed before the effects may go ahead (the effect that needs the most). */
  approvals_needed?: number;
}

/**
 * done: performed, output recorded; not_configured: the tool cannot run for
 * this tenant; failed: kept failing, nothing was done; outcome_unknown: an
 * effect may or may not have happened (a delivery that timed out after
 * sending); refused: the service would not run it (not in the approved plan,
 * unknown tool, invalid arguments). Anything but done is unresolved.
 */
export type StepStatus = 'done' | 'not_configured' | 'failed' | 'outcome_unknown' | 'refused';

export interface StepResult {
  step_id: string;
  /** A built-in tool, or a server tool `<server>__<tool>`. */
  tool: string;
  status: StepStatus;
  detail: string;
  output: unknown;
  /** What the tool worked on (for text_analysis, the text analysed), so verification can derive the output again. */
  scope?: string;
  /** digestOf(output) when the tool produced it; verification recomputes and compares it. */
  output_digest?: string | null;
  /** What the step read: `memory:<entry id>` and the like, for the receipt's source coverage. */
  sources: string[];
}

/** Why a model-driven run stopped before its model gave a final answer. */
export interface LoopStop {
  code: 'plan_invalid' | 'plan_empty' | 'turn_limit' | 'hold_exhausted' | 'model_unavailable' | 'model_refused' | 'approval_expired';
  message: string;
}
