// The parts of the public API's objects the inbox reads (the AgentRun and RunEvent of /openapi.json).

export type RunState = 'accepted' | 'planning' | 'awaiting_approval' | 'executing' | 'verifying' | 'completed' | 'failed' | 'needs_attention';

export interface Progress {
  state: RunState;
  steps_done: number;
  steps_total: number;
  current_step: string | null;
  current_plan_step: string | null;
}

export interface Effect {
  step_id: string;
  tool: string;
  why: string;
  server?: string;
  server_tool?: string;
  arguments?: Record<string, unknown>;
  args_digest?: string;
  proposed_digest?: string;
  message_from?: { action: number; request: string };
  required?: number;
  approved_by?: Approver[];
}

/** Who decided: an approver key and its person, or `temporal` (key_id null). */
export interface Approver {
  key_id: string | null;
  name: string;
}

export interface Vote {
  by: Approver;
  decision: 'approve' | 'reject';
  reason: string | null;
  at: string;
  channel: string;
  edited?: string[];
}

export interface PlanStep {
  id: string;
  tool: string;
  effect: 'read' | 'external';
  purpose: string;
}

export interface Receipt {
  receipt_id: string;
  verification_class: string;
  unresolved: string[];
  action_boundary: {
    effects_requested: string[];
    effects_approved: string[];
    effects_performed: string[];
    effects_not_performed: string[];
    effects_outcome_unknown: string[];
    approved_by?: { effect: string; key_id: string | null; name: string }[];
  };
}

export interface Run {
  run_id: string;
  status: RunState;
  progress: Progress;
  input: string;
  created_at: string;
  updated_at: string;
  estimate: { amounts: { total: number } } | null;
  reservation: { amount?: number; status: 'held' | 'settled' | 'released' } | null;
  usage: { charged: number } | null;
  plan: { steps: PlanStep[] } | null;
  approval: {
    state: 'pending' | 'approved' | 'rejected' | 'expired' | 'cancelled';
    effects: Effect[];
    deadline: string;
    decided_at: string | null;
    decision_reason: string | null;
    approvals?: Vote[];
    approvals_needed?: number;
  } | null;
  result: { summary?: string; answer?: string } | null;
  receipt: Receipt | null;
  failure: { code: string; message: string } | null;
}

export interface RunEvent {
  id: string;
  kind: string;
  run_id: string;
  state: RunState;
  progress: Progress;
}

/** The contract's error object. */
export interface ApiErrorBody {
  error: { type: string; code: string; message: string; param?: string | null };
}

export const TERMINAL: readonly RunState[] = ['completed', 'failed', 'needs_attention'];
