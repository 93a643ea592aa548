// What the Temporal UI shows about a run, built from the workflow's live state:
// its progress (also written to the projection) and the markdown of its
// summary and current details. Pure and content-free: states, counts, step
// ids and tool names, never input, output or reasons.
import type { RunProgress } from '../domain/runs/progress.ts';
import { isTerminal } from '../domain/runs/states.ts';
import type { RunLiveState } from './messages.ts';

export function progressOf(live: RunLiveState): RunProgress {
  const ended = isTerminal(live.status);
  return {
    state: live.status,
    steps_done: live.stepsDone,
    steps_total: live.stepsTotal,
    current_step: ended ? null : live.step,
    current_plan_step: ended ? null : live.currentPlanStep,
    waiting_for: live.status === 'awaiting_approval' ? 'approval' : null,
  };
}

/** Effects awaiting a decision, as the UI lists them. */
export interface PendingEffect {
  step_id: string;
  tool: string;
}

/** The run's current details (markdown) for the Temporal UI. */
export function currentDetailsOf(runId: string, live: RunLiveState, pending: PendingEffect[], failureCode: string | null): string {
  const p = progressOf(live);
  const lines = [`**State:** ${p.state}`];
  if (p.steps_total > 0)
    lines.push(
      `**Progress:** step ${Math.min(p.steps_done + (p.current_plan_step ? 1 : 0), p.steps_total)} of ${p.steps_total}${p.current_plan_step ? ` (${p.current_plan_step})` : ''}, ${p.steps_done} done`,
    );
  if (p.current_step) lines.push(`**Workflow step:** ${p.current_step}`);
  if (p.waiting_for === 'approval') {
    lines.push(`**Waiting for:** approval of ${pending.length} external effect(s): ${pending.map((e) => `${e.step_id} ${e.tool}`).join(', ')}`);
    lines.push(
      `Decide with the validated Update: \`temporal workflow update execute --workflow-id ${runId} --name approval --input '{"decision":"approve","reason":"…"}'\``,
    );
  }
  if (failureCode) lines.push(`**Failure:** ${failureCode}`);
  return lines.join('\n\n');
}
