// The local provider's accounting (no model): its planner's report (plan-report.ts: one part per
// requested action it read, with the step that did it or why it is unresolved), read by the same
// structural verification as any model's report (domain/runs/tool-verification.ts). Its plan is
// approved as a whole, so each external step counts as approved with it.
import { verifyToolRun } from '../runs/tool-verification.ts';
import type { VerifyInput } from '../runs/verification.ts';
import { actionsOf } from './plan.ts';
import { planReport } from './plan-report.ts';

export function verifyLocalRun(v: VerifyInput): ReturnType<typeof verifyToolRun> {
  const shown = new Map(v.results.map((r) => [r.step_id, r]));
  // The actions as read when the plan was made (recorded in it), cited by step id.
  const report = planReport(v.input, v.plan, actionsOf(v.plan, v.input), [], shown, (s) => s.id);
  const read = v.memory ? 'the input and the recalled memory entries were read' : 'only the input was read';
  return verifyToolRun({
    runId: v.runId,
    input: v.input,
    plan: v.plan,
    results: v.results,
    report: JSON.stringify(report),
    stopped: v.stopped ?? null,
    refusals: v.refusals ?? [],
    approval: v.approval,
    reporter: `the local planner's report (no model; ${read})`,
  });
}
