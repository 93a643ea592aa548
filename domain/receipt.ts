// Completion receipts: the evidence a result carries. Shared by the trial and
// (later) durable runs, so both speak the same receipt language.

export type VerificationClass =
  /** Derived by deterministic rules from the given input only; no outside source consulted (the trial). */
  | 'deterministic_derivation'
  /** Every requested action maps to a performed step whose output digest was recomputed and matched at verification; nothing unresolved. */
  | 'verified'
  /** Some requested actions were performed and checked; the rest are listed in `unresolved`. */
  | 'partially_verified'
  /** No requested action was both performed and checked; see `unresolved`. */
  | 'unverified';

export interface ActionBoundary {
  /** External effects the request or the plan asked for: `<tool>:<step>` or `action_<n>:<verb>`. */
  effects_requested: string[];
  effects_approved: string[];
  /** Who approved each approved effect: the approver key and its person (or `temporal`). */
  approved_by?: { effect: string; key_id: string | null; name: string }[];
  /** Done, and confirmed by the receiver. */
  effects_performed: string[];
  /** Certainly not done: refused, rejected, not configured, failed before sending, or no tool can do it. */
  effects_not_performed?: string[];
  /** May or may not have happened (a delivery that timed out after sending). Always unresolved. */
  effects_outcome_unknown?: string[];
}

/** One requested action of a run's input and what became of it. */
export interface ActionOutcome {
  n: number;
  /** effect / information: a part of a tool-calling run's report; the others: an action the word lists read (runs before it). */
  kind: 'analysis' | 'delivery' | 'unsupported' | 'effect' | 'information';
  /** Tool-calling runs: the words of the request this part accounts for, verbatim. */
  quote?: string;
  outcome: 'performed' | 'not_performed' | 'outcome_unknown';
  /** The steps (or `answer`) that carried it out. */
  by: string[];
  /** Whether every output it rests on was recomputed and matched at verification. */
  checked: boolean;
}

export interface SourceCoverage {
  sources: { source: string; digest: string; characters: number; units_total: number; units_used: number }[];
  /** Share of the input's units (sentences) the result drew on, 0 to 1. */
  coverage_ratio: number;
}

export interface CompletionReceipt {
  receipt_id: string;
  subject: { kind: 'trial' | 'run'; id: string };
  verification_class: VerificationClass;
  action_boundary: ActionBoundary;
  source_coverage: SourceCoverage;
  digests: { algorithm: 'sha256'; input: string; result: string; [part: string]: string };
  unresolved: string[];
  persisted: boolean;
  /** Runs only: each requested action and its outcome. */
  actions?: ActionOutcome[];
}

export function coverageRatio(used: number, total: number): number {
  return total === 0 ? 0 : Math.round((used / total) * 1000) / 1000;
}
