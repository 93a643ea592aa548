// A run's progress as the API shows it: the progress the workflow recorded
// (RunProgress, on the run row and on each journey event), or, for rows and
// events written before progress was recorded, one derived from what they do
// hold. Content-free: counts, step names and plan step ids only.
import type { RunProgress } from '../domain/runs/progress.ts';
import { isRunStatus, isTerminal, RUN_STEPS, type RunStatus, type RunStep } from '../domain/runs/states.ts';

const isRunStep = (v: unknown): v is RunStep => typeof v === 'string' && (RUN_STEPS as readonly string[]).includes(v);
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;

/** Recorded progress (jsonb) as RunProgress, or null when there is none or it is not one. */
export function recordedProgress(value: unknown): RunProgress | null {
  if (!value || typeof value !== 'object') return null;
  const p = value as Record<string, unknown>;
  if (!isRunStatus(p.state) || !isCount(p.steps_done) || !isCount(p.steps_total)) return null;
  return {
    state: p.state,
    steps_done: p.steps_done,
    steps_total: p.steps_total,
    current_step: isRunStep(p.current_step) ? p.current_step : null,
    current_plan_step: typeof p.current_plan_step === 'string' ? p.current_plan_step : null,
    waiting_for: p.waiting_for === 'approval' ? 'approval' : null,
  };
}

/** The workflow step a state is in when nothing more precise is known. */
const STEP_OF_STATE: Record<RunStatus, RunStep | null> = {
  accepted: 'estimate',
  planning: 'estimate',
  awaiting_approval: 'approval',
  executing: 'execute',
  verifying: 'verify',
  completed: null,
  failed: null,
  needs_attention: null,
};

export interface RunProgressFacts {
  status: string;
  currentStep: string | null;
  plan: unknown;
  result: unknown;
  progress: unknown;
}

function planStepIds(plan: unknown): string[] {
  const steps = (plan as { steps?: unknown } | null)?.steps;
  return Array.isArray(steps) ? steps.map((s) => String((s as { id?: unknown })?.id)) : [];
}

function finishedStepIds(result: unknown): Set<string> {
  const steps = (result as { steps?: unknown } | null)?.steps;
  return new Set(Array.isArray(steps) ? steps.map((s) => String((s as { step_id?: unknown })?.step_id)) : []);
}

/**
 * The run's progress: the recorded one while it describes the run's current state; otherwise derived from
 * the row: steps_total from the plan, steps_done from the plan steps with a result, the step the row names,
 * the first plan step without a result while executing, and waiting_for approval while awaiting approval.
 */
export function progressOfRun(run: RunProgressFacts): RunProgress {
  const state: RunStatus = isRunStatus(run.status) ? run.status : 'accepted';
  const recorded = recordedProgress(run.progress);
  if (recorded && recorded.state === state) return recorded;
  const planIds = planStepIds(run.plan);
  const finished = finishedStepIds(run.result);
  const done = planIds.filter((id) => finished.has(id)).length;
  return {
    state,
    steps_done: done,
    steps_total: planIds.length,
    current_step: isTerminal(state) ? null : isRunStep(run.currentStep) ? run.currentStep : STEP_OF_STATE[state],
    current_plan_step: state === 'executing' ? (planIds.find((id) => !finished.has(id)) ?? null) : null,
    waiting_for: state === 'awaiting_approval' ? 'approval' : null,
  };
}

export interface JourneyProgressFacts {
  kind: string;
  state: string | null;
  progress: unknown;
  /** run.step_finished events of the run up to and including this one (those still retained). */
  stepsFinished: number;
  /** Steps in the run's plan, 0 while it has none. */
  planSteps: number;
}

/**
 * The progress at a journey event: the recorded one, or, for an event recorded before progress was,
 * one derived from its kind and state, the run's plan and the run.step_finished events up to it.
 * Null only for an event that is not about a run state (no run state recorded).
 */
export function progressOfJourneyEvent(e: JourneyProgressFacts): RunProgress | null {
  const recorded = recordedProgress(e.progress);
  if (recorded) return recorded;
  if (!isRunStatus(e.state)) return null;
  const state = e.state;
  // The plan exists from the state after planning on; before, there is nothing to count.
  const total = state === 'accepted' || state === 'planning' ? 0 : e.planSteps;
  const named = e.kind.startsWith('run.step.') ? e.kind.slice('run.step.'.length) : null;
  return {
    state,
    steps_done: Math.min(e.stepsFinished, total),
    steps_total: total,
    current_step: isTerminal(state) ? null : isRunStep(named) ? named : STEP_OF_STATE[state],
    current_plan_step: null,
    waiting_for: state === 'awaiting_approval' ? 'approval' : null,
  };
}
