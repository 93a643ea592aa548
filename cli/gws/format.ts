// The words `gws` shows for runs, events and chat: plain text, no escape codes (the terminal
// display adds its spinner and symbols through ora). Never the run's input text in what follows a run.
import type { AgentRun, RunProgress } from '../../client/index.ts';

export const TERMINAL_STATES: readonly string[] = ['completed', 'failed', 'needs_attention'];
export const isTerminalState = (state: string) => TERMINAL_STATES.includes(state);

/**
 * "executing · step 2 of 3 (step_2)", "planning · reserve", "awaiting_approval · waiting for approval · 0 of 3 steps done".
 * `kind` is the event's: a run.step_finished event names the plan step that just finished, not the next one.
 */
export function describeProgress(state: string, progress: RunProgress | null | undefined, kind?: string): string {
  const parts = [state];
  if (!progress) return state;
  const { steps_done: done, steps_total: total } = progress;
  const finished = kind === 'run.step_finished';
  if (progress.waiting_for === 'approval') parts.push('waiting for approval');
  if (state === 'executing' && total > 0 && done < total) {
    parts.push(`step ${done + 1} of ${total}${progress.current_plan_step && !finished ? ` (${progress.current_plan_step})` : ''}`);
  } else if (total > 0) {
    parts.push(`${done} of ${total} step${total === 1 ? '' : 's'} done`);
  } else if (progress.current_step && !isTerminalState(state) && progress.current_step !== 'approval') {
    parts.push(progress.current_step);
  }
  if (finished && progress.current_plan_step) parts.push(`${progress.current_plan_step} finished`);
  return parts.join(' · ');
}

export const describeRun = (run: AgentRun) => describeProgress(run.status, run.progress);

/**
 * The commands the CLI suggests. `npx gws` works in a clone without `npm link`; one form
 * everywhere, so a hint can be pasted as printed.
 */
export const gwsCommand = {
  approve: (runId: string) => `npx gws approve ${runId}`,
  reject: (runId: string) => `npx gws reject ${runId}`,
  follow: (runId: string) => `npx gws runs get ${runId} --watch`,
};

type Effect = NonNullable<AgentRun['approval']>['effects'][number];

/** Each effect an approval is about, and exactly what it will do: every argument (its message, its audience, a path…), or the action whose result it carries. */
function effectLines(effects: Effect[]): string[] {
  const width = Math.max(0, ...effects.map((e) => e.step_id.length));
  const under = `  ${''.padEnd(width)}  `;
  return effects.flatMap((effect) => {
    const args = Object.entries(effect.arguments ?? {}).map(([name, value]) => `${under}${name}: ${JSON.stringify(value)}`);
    const sends =
      args.length > 0
        ? args
        : effect.message_from
          ? [`${under}sends the result of action ${effect.message_from.action} (${JSON.stringify(effect.message_from.request)})`]
          : [];
    return [`  ${effect.step_id.padEnd(width)}  ${effect.tool}`, ...sends];
  });
}

/** The lines that say what an approval waits for: the effects (step id and tool) and the commands that decide. */
export function approvalLines(run: AgentRun): string[] {
  const effects = run.approval?.effects ?? [];
  const lines = [
    `approval needed for ${effects.length} external effect${effects.length === 1 ? '' : 's'}${run.approval?.deadline ? ` (decide before ${run.approval.deadline})` : ''}:`,
  ];
  lines.push(...effectLines(effects));
  lines.push(`approve: ${gwsCommand.approve(run.run_id)}`);
  lines.push(`reject:  ${gwsCommand.reject(run.run_id)}`);
  lines.push('(add --reason "…" to record why)');
  return lines;
}

/** The summary of a finished watch: state, verification class, unresolved count, failure code. */
export function summaryLines(run: AgentRun): string[] {
  const lines = [`state: ${run.status}`, `verification: ${run.receipt?.verification_class ?? 'none'}`, `unresolved: ${run.receipt?.unresolved.length ?? 0}`];
  lines.push(`failure: ${run.failure ? `${run.failure.code} (${run.failure.message})` : 'none'}`);
  return lines;
}

/** One line of `gws runs list`: id, state and progress, model, created. */
export function listLine(run: AgentRun): string {
  return [run.run_id, describeRun(run), run.model, run.created_at].join('\t');
}

/** `gws runs get` as key: value lines (the input included: it was asked for by id). */
export function runLines(run: AgentRun): string[] {
  const lines = [
    `run: ${run.run_id}`,
    `state: ${describeRun(run)}`,
    `model: ${run.model}`,
    `memory: ${run.memory}`,
    `created: ${run.created_at}`,
    `updated: ${run.updated_at}`,
  ];
  if (run.completed_at) lines.push(`completed: ${run.completed_at}`);
  if (run.plan) lines.push(`plan: ${run.plan.steps.map((s) => `${s.id} ${s.tool}`).join(', ') || 'no steps'}`);
  if (run.approval) {
    lines.push(`approval: ${run.approval.state}${run.approval.decision_reason ? ` (${run.approval.decision_reason})` : ''}`);
    lines.push(...effectLines(run.approval.effects));
  }
  if (run.usage) lines.push(`charged: ${run.usage.charged} credits (released ${run.usage.released})`);
  lines.push(...summaryLines(run).slice(1));
  if (run.receipt?.unresolved.length) for (const open of run.receipt.unresolved) lines.push(`  unresolved: ${open}`);
  lines.push(`input: ${run.input}`);
  return lines;
}
