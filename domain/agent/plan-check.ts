// Checking a model's plan: its shape (JSON, the service's plan schema, each
// tool's argument schema, action numbers that exist) and that it accounts for
// every requested action, by a step, by the final answer, or as unresolved.
// Pure, so the planning activity and the tests share it.
import Ajv from 'ajv';
import { digestOf } from '../digest.ts';
import type { Plan, PlanGap, PlanStep } from '../planning/plan.ts';
import type { RequestedAction } from '../planning/requested-actions.ts';
import type { LoopStop } from '../runs/run-types.ts';
import { truncate } from '../text/analyze.ts';
import { effectOf, type ServerToolCatalog } from '../tools.ts';
import { scopeOf } from './admission.ts';
import { callArguments } from './fixed-arguments.ts';
import { fromExactForm, isExactForm } from './exact-plan.ts';
import type { ActionOptions } from './plan-options.ts';
import { type ModelPlan, PLAN_SCHEMA } from './plan-schema.ts';
import { argumentProblems, isKnownTool } from './tool-args.ts';

const ajv = new Ajv.default({ strict: false, allErrors: true });
// The tool names are checked apart (isKnownTool), so the schema's own enum is not what decides them.
const validatePlan = ajv.compile({
  ...PLAN_SCHEMA,
  properties: {
    ...PLAN_SCHEMA.properties,
    steps: {
      ...PLAN_SCHEMA.properties.steps,
      items: { ...PLAN_SCHEMA.properties.steps.items, properties: { ...PLAN_SCHEMA.properties.steps.items.properties, tool: { type: 'string' } } },
    },
  },
});

export type PlanProposal = { kind: 'planned'; plan: Plan } | { kind: 'invalid'; problems: string[] } | { kind: 'stopped'; stop: LoopStop };

/**
 * The plan a valid model answer describes; effect classes from the catalog (a server tool's from the
 * operator's configuration), never from the model. Each step's arguments are bound by their digest.
 */
function toPlan(plan: ModelPlan, serverTools: ServerToolCatalog, gaps: PlanGap[] = []): Plan {
  const steps: PlanStep[] = plan.steps.map((s, i) => {
    const args = callArguments(s.tool, s.arguments, serverTools);
    return {
      id: `step_${i + 1}`,
      tool: s.tool,
      effect: effectOf(s.tool, serverTools) ?? 'external',
      purpose: s.purpose,
      scope: scopeOf(s.tool, args),
      covers: s.covers,
      arguments: args,
      args_digest: digestOf(args),
    };
  });
  const used = new Set(steps.map((s) => s.tool));
  return {
    planner: 'model',
    steps,
    answer: [...new Set(plan.answer)],
    gaps: [...plan.unresolved, ...gaps],
    ...(Object.keys(serverTools).length
      ? { serverTools: Object.fromEntries(Object.entries(serverTools).filter(([name]) => used.has(name) || serverTools[name]!.effect === 'read')) }
      : {}),
  };
}

const errorsOf = (errs: { instancePath?: string; message?: string }[] | null | undefined) => (errs ?? []).map((e) => `${e.instancePath || '/'} ${e.message}`);

/** Problems of a model's plan that make it unusable (not JSON, not the schema, bad arguments or numbers); empty when it is usable. */
function shapeProblems(v: ModelPlan, actions: RequestedAction[], serverTools: ServerToolCatalog): string[] {
  const problems: string[] = [];
  const exists = (n: number) => n >= 1 && n <= actions.length;
  v.steps.forEach((s, i) => {
    const argsProblem = argumentProblems(s.tool, s.arguments, serverTools);
    if (argsProblem) problems.push(`steps[${i}].arguments: ${argsProblem}`);
    if (s.covers.length === 0) problems.push(`steps[${i}].covers: the step carries out no requested action; every step must cover at least one.`);
    for (const n of s.covers) if (!exists(n)) problems.push(`steps[${i}].covers: there is no action ${n}.`);
  });
  for (const n of v.answer) {
    if (!exists(n)) problems.push(`answer: there is no action ${n}.`);
    else if (actions[n - 1]!.kind !== 'analysis')
      problems.push(`answer: action ${n} asks to ${actions[n - 1]!.verb ?? 'act'}, which an answer cannot do; give it a step or put it in unresolved.`);
  }
  for (const u of v.unresolved) if (!exists(u.action)) problems.push(`unresolved: there is no action ${u.action}.`);
  return problems;
}

export interface PlanAssessment {
  /** Everything wrong with the answer, in words the model can fix. */
  problems: string[];
  /** The plan, when its shape is usable (its coverage may still fall short). */
  plan?: ModelPlan;
  /** Actions the plan neither covers by a step, nor answers, nor lists as unresolved. */
  uncovered: RequestedAction[];
  /** No step, no answered action, and actions left unaccounted for: the plan does nothing and says nothing. */
  empty: boolean;
}

/**
 * Checks a model's plan answer: its shape, then that it accounts for every requested action. An answer
 * in the per-request form (exact-plan.ts) is read against the options each action was offered; one in
 * the earlier steps/answer/unresolved form is read as it always was.
 */
export function assessPlan(content: string | null, actions: RequestedAction[], serverTools: ServerToolCatalog = {}, options?: ActionOptions[]): PlanAssessment {
  const none = (problems: string[]): PlanAssessment => ({ problems, uncovered: actions, empty: true });
  let value: unknown;
  try {
    value = JSON.parse(content ?? '');
  } catch {
    return none(['The answer is not JSON.']);
  }
  if (options && isExactForm(value)) {
    const exact = fromExactForm(value, actions, options);
    if (exact.problems.length) return none(exact.problems);
    value = exact.plan;
  }
  const v = value as ModelPlan;
  // `answer` came with runs that answer per action; a model that leaves it out answers nothing.
  if (v && typeof v === 'object' && !Array.isArray(v) && v.answer === undefined) v.answer = [];
  const unknownTools = Array.isArray(v?.steps)
    ? v.steps.map((s, i) => [i, s?.tool] as const).filter(([, t]) => typeof t !== 'string' || !isKnownTool(t, serverTools))
    : [];
  if (unknownTools.length) return none(unknownTools.map(([i, t]) => `steps[${i}].tool: "${String(t).slice(0, 64)}" is not a tool of the catalog.`));
  if (!validatePlan(value)) return none(errorsOf(validatePlan.errors));
  const shape = shapeProblems(v, actions, serverTools);
  if (shape.length) return none(shape);
  const accounted = new Set([...v.steps.flatMap((s) => s.covers), ...v.answer, ...v.unresolved.map((u) => u.action)]);
  const uncovered = actions.filter((a) => !accounted.has(a.n));
  // Nothing done and something left out. A plan that lists every action unresolved, with a reason, is
  // a plan: it says honestly that nothing here can be done, and the run ends needs_attention saying so.
  const empty = v.steps.length === 0 && v.answer.length === 0 && uncovered.length > 0;
  const problems = [
    ...(empty ? ['The plan is empty: no step and no action answered. Plan the work, or list in unresolved why an action cannot be done.'] : []),
    ...uncovered.map((a) => `Action ${a.n} ("${truncate(a.clause, 80)}") is in no step's covers, not in answer and not in unresolved.`),
  ];
  return { problems, plan: v, uncovered, empty };
}

const LEFT_OUT = "the model's plan left it out: no step covers it, the answer does not take it, and it is not listed as unresolved";

/**
 * What the planning activity makes of an assessed plan. A plan that falls short is shown its problems
 * once; on the last attempt, a plan that does something runs with the actions it left out unresolved,
 * and a plan that still does nothing ends the run, naming every action it left uncovered.
 */
export function proposalOf(assessment: PlanAssessment, lastAttempt: boolean, serverTools: ServerToolCatalog = {}): PlanProposal {
  const { plan, problems, uncovered, empty } = assessment;
  if (!plan) return { kind: 'invalid', problems: problems.slice(0, 10) };
  if (problems.length === 0) return { kind: 'planned', plan: toPlan(plan, serverTools) };
  if (!lastAttempt) return { kind: 'invalid', problems: problems.slice(0, 10) };
  if (!empty)
    return {
      kind: 'planned',
      plan: toPlan(
        plan,
        serverTools,
        uncovered.map((a) => ({ action: a.n, reason: LEFT_OUT })),
      ),
    };
  const listed = uncovered.map((a) => `action ${a.n} "${truncate(a.clause, 80)}"`).join('; ');
  return {
    kind: 'stopped',
    stop: {
      code: 'plan_empty',
      message: `The model planned nothing twice, so no action was done. Uncovered: ${listed || 'none (every action was listed unresolved)'}.`,
    },
  };
}
