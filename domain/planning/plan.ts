import type { EffectClass, ToolId } from '../tools.ts';

export interface PlanStep {
  /** step_1, step_2, … in execution order. */
  id: string;
  tool: ToolId;
  effect: EffectClass;
  /** Why the step exists, in words a reviewer can approve or reject. */
  purpose: string;
  /** What the step works on: a part of the input, or a recall query. */
  scope: string;
}

export interface Plan {
  planner: string;
  steps: PlanStep[];
}

/** Turns a run's input into a bounded plan. The default is the local deterministic planner. */
export interface PlanningProvider {
  readonly name: string;
  plan(request: { input: string; memory: boolean }): Promise<Plan>;
}
