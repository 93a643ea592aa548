// Completion receipts: the evidence a result carries. Shared by the trial and
// (later) durable runs, so both speak the same receipt language.

export type VerificationClass =
  /** Derived by deterministic rules from the given input only; no outside source consulted. */
  | 'deterministic_derivation'
  /** Every step verified against its declared check. */
  | 'verified'
  /** Some part could not be verified; see `unresolved`. */
  | 'partially_verified';

export interface ActionBoundary {
  effects_requested: string[];
  effects_approved: string[];
  effects_performed: string[];
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
}

export function coverageRatio(used: number, total: number): number {
  return total === 0 ? 0 : Math.round((used / total) * 1000) / 1000;
}
