// The receipt of a run that ended before verification: refused at reserve, stopped at planning,
// rejected, expired, cancelled, or failed. Computed by the same verification as any run's, from
// what the run had when it ended (its plan, if any, and the steps that ran), so it claims nothing
// that was not done: everything not performed is in `unresolved`, with the reason the run ended.
// A run with no plan yet, or a tool-calling run, has no report: every sentence of its request is
// unresolved (no words of it are read); a plan by requested actions recorded them when it was made.
import { verifyLocalRun } from '../planning/local-report.ts';
import { actionsOf, type Plan, type PlanGap } from '../planning/plan.ts';
import type { CompletionReceipt } from '../receipt.ts';
import type { ApprovalRecord, LoopStop, StepResult } from './run-types.ts';
import type { RunStatus } from './states.ts';
import { verifyToolRun } from './tool-verification.ts';
import { verifyRun } from './verification.ts';

export interface RunAtEnd {
  runId: string;
  input: string;
  memory: boolean;
  status: RunStatus;
  /** The step the run was at when it ended. */
  step: string;
  plan: Plan | null;
  results: StepResult[];
  approval: ApprovalRecord | null;
  failure: { code: string; message: string } | null;
}

/** Why an action the run never reached was not done. */
function endedBefore(r: RunAtEnd): string {
  return `the run ended ${r.status} at ${r.step}${r.failure ? ` (${r.failure.code})` : ''} before it was done`;
}

/**
 * The plan as verification reads it at the end: with no plan, every action is a gap; with one, every
 * action the model was to answer is a gap too (a run that ends here has no answer).
 */
function planAtEnd(r: RunAtEnd): Plan {
  const actions = actionsOf(r.plan, r.input);
  const reason = endedBefore(r);
  const plan = r.plan ?? { planner: 'none', steps: [] };
  const gapped = new Set((plan.gaps ?? []).map((g) => g.action));
  const answered = new Set(plan.answer ?? []);
  const covered = new Set(plan.steps.flatMap((s) => s.covers ?? []));
  const gaps: PlanGap[] = actions.filter((a) => !gapped.has(a.n) && (answered.has(a.n) || !covered.has(a.n))).map((a) => ({ action: a.n, reason }));
  return { ...plan, answer: [], gaps: [...(plan.gaps ?? []), ...gaps] };
}

export function endingReceipt(r: RunAtEnd): CompletionReceipt {
  // The failure code names why it ended (a LoopStop in shape, whatever its code).
  const stopped = (r.failure ? { code: r.failure.code, message: r.failure.message } : { code: r.status, message: `${endedBefore(r)}.` }) as LoopStop;
  const { runId, input, memory, results, approval } = r;
  if (!r.plan || r.plan.protocol === 'tool_calls') {
    const plan = r.plan ?? { planner: 'none', steps: [] };
    return verifyToolRun({ runId, input, plan, results, report: null, stopped, refusals: [] }).receipt;
  }
  const verify = { runId, input, memory, plan: planAtEnd(r), results, approval, answer: null, stopped };
  return (r.plan.planner === 'local-deterministic' ? verifyLocalRun(verify) : verifyRun(verify)).receipt;
}
