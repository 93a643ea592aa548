// Recipe "bounded_work_plan": the objective's own action clauses become an
// ordered plan of at most MAX_STEPS steps, each with a done-when check built
// from the terms and constraints it mentions.
import { type ObjectiveFacts, capitalize, keyTermsOf, truncate, wordsOf } from '../text/analyze.ts';
import type { RecipeOutput } from './recipe.ts';

export const MAX_STEPS = 7;

export interface WorkPlanStep {
  order: number;
  action: string;
  focus_terms: string[];
  done_when: string;
  effort: 'small' | 'medium' | 'large';
  effect: 'read';
}

export interface BoundedWorkPlan {
  goal: string;
  steps: WorkPlanStep[];
  constraints: string[];
  quantities: string[];
  out_of_scope: string[];
  bounds: { max_steps: number; clauses_found: number; steps_truncated: boolean };
  /** Statements of fact from the objective (budget, team, current state) that frame the plan. */
  context: string[];
}

function effortOf(action: string, focus: number): WorkPlanStep['effort'] {
  const size = wordsOf(action).length + focus * 2;
  return size <= 8 ? 'small' : size <= 16 ? 'medium' : 'large';
}

/** "Budget is $20,000", "the team has 3 engineers": context for the plan, not a step of it. */
const DESCRIPTIVE = /^(?:(?:the|our|my|a|an|this|that|there)\s+)?[\w$-]+(?:\s+[\w$-]+)?\s+(?:is|are|was|were|has|have)\b/i;

/** A condition the step states itself: "… without downtime", "… by March 31". */
const OWN_CONDITION = /\s+((?:without|by|before|within|under|no more than|at most|at least|only|until)\b.*)$/i;

function doneWhen(action: string, focus: string[], constraints: string[]): string {
  const own = OWN_CONDITION.exec(action);
  if (own?.[1]) return `"${capitalize(truncate(action.slice(0, own.index), 80))}" is finished ${truncate(own[1], 80)}`;
  const related = constraints.find((c) => c !== action && focus.some((t) => c.toLowerCase().includes(t)));
  const what = focus.length > 0 ? `a reviewed result covers ${focus.join(', ')}` : `"${truncate(action, 60)}" has a reviewed result`;
  return related ? `${capitalize(what)} and respects "${truncate(related, 100)}"` : capitalize(what);
}

/** When the objective names only one or two actions, its key terms give the missing scaffolding steps. */
function scaffoldClauses(facts: ObjectiveFacts): { clause: string; focus: string[] }[] {
  const [first, second, third] = facts.keyTerms.map((k) => k.term);
  const steps: { clause: string; focus: string[] }[] = [];
  if (first) steps.push({ clause: `Pin down what "${first}" must cover and what done looks like`, focus: [first] });
  if (second) {
    const inputs = third ? [second, third] : [second];
    steps.push({ clause: `Collect the inputs on ${inputs.join(' and ')} that the work depends on`, focus: inputs });
  }
  if (facts.constraints.length > 0) {
    steps.push({ clause: `Check the draft result against the ${facts.constraints.length} stated constraint(s)`, focus: [] });
  }
  return steps;
}

export function boundedWorkPlan(facts: ObjectiveFacts): RecipeOutput<BoundedWorkPlan> {
  const actions = facts.clauses.filter((c) => !DESCRIPTIVE.test(c));
  const own = actions.map((clause) => ({ clause, focus: keyTermsOf(clause, 3).map((k) => k.term) }));
  const clauses = actions.length >= 3 ? own : [...own, ...scaffoldClauses(facts)];
  const steps = clauses.slice(0, MAX_STEPS).map(({ clause, focus }, i): WorkPlanStep => {
    return {
      order: i + 1,
      action: capitalize(truncate(clause, 160)),
      focus_terms: focus,
      done_when: doneWhen(clause, focus, facts.constraints),
      effort: effortOf(clause, focus.length),
      effect: 'read',
    };
  });
  const result: BoundedWorkPlan = {
    goal: truncate(facts.sentences[0] ?? facts.text, 240),
    steps,
    constraints: facts.constraints.map((c) => truncate(c, 200)),
    quantities: facts.quantities,
    out_of_scope: [...facts.exclusions, 'Any external action: this plan is a proposal, nothing is executed'],
    bounds: { max_steps: MAX_STEPS, clauses_found: facts.clauses.length, steps_truncated: clauses.length > MAX_STEPS },
    context: facts.clauses.filter((c) => DESCRIPTIVE.test(c)).map((c) => truncate(c, 200)),
  };
  const unresolved: string[] = [];
  if (clauses.length > MAX_STEPS) unresolved.push(`${clauses.length - MAX_STEPS} further action(s) did not fit the ${MAX_STEPS}-step bound`);
  if (facts.constraints.length === 0) unresolved.push('No constraint (deadline, budget, limit) was stated; the plan is unbounded in time and cost');
  if (actions.length < 3) unresolved.push('The objective names fewer than three actions; scaffolding steps were derived from its key terms');
  return { result, unresolved, usedSentences: facts.sentences.filter((s) => facts.clauses.some((c) => s.includes(c.slice(0, 20)))) };
}
