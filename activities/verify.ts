// Verification as an activity: the receipt is computed from the plan, the
// step results and the input (domain/runs/verification.ts), so a retry
// computes the same receipt.
import type { CompletionReceipt } from '../domain/receipt.ts';
import { type ToolRunVerifyInput, verifyToolRun } from '../domain/runs/tool-verification.ts';
import { verifyLocalRun } from '../domain/planning/local-report.ts';
import { type RunResult, type VerifyInput, verifyRun } from '../domain/runs/verification.ts';

export function verifyActivities() {
  return {
    /** `summary` is what the run remembers of itself (memory: true): counts only, never text of a step or a recalled entry. */
    async verifyRun(v: VerifyInput): Promise<{ result: RunResult; receipt: CompletionReceipt; summary: string }> {
      // The local provider's plan is accounted for by its report, read structurally; verifyRun's
      // accounting by requested actions serves the plan-schema protocol and runs planned before.
      const { result, receipt, outcome } = v.plan.planner === 'local-deterministic' ? verifyLocalRun(v) : verifyRun(v);
      return { result, receipt, summary: outcome };
    },
    /** A tool-calling run's receipt, from its calls, approvals and the model's report (domain/runs/tool-verification.ts). */
    async verifyToolRun(v: ToolRunVerifyInput): Promise<{ result: RunResult; receipt: CompletionReceipt; summary: string }> {
      const { result, receipt, outcome } = verifyToolRun(v);
      return { result, receipt, summary: outcome };
    },
  };
}
