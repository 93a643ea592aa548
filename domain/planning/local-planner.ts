// The default planning provider: no account, no network. Its plan follows from
// the input's content: one analysis step per action clause, a memory recall
// when memory is on, and a webhook delivery only when the input asks for the
// result to be sent somewhere (the one external effect, which needs approval).
import { analyzeObjective, truncate } from '../text/analyze.ts';
import { TOOLS, type ToolId } from '../tools.ts';
import type { Plan, PlanningProvider, PlanStep } from './plan.ts';

export const MAX_PLAN_STEPS = 6;
const MAX_ANALYSIS_STEPS = 4;
const DELIVERY_INTENT = /\b(send|deliver|notify|post|publish|webhook|forward|push)\b/i;

export function planLocally(input: string, memory: boolean): Plan {
  const facts = analyzeObjective(input);
  const drafts: { tool: ToolId; purpose: string; scope: string }[] = [];
  if (memory) {
    const query = facts.keyTerms.slice(0, 3).map((k) => k.term).join(' ') || truncate(facts.text, 80);
    drafts.push({ tool: 'memory_recall', purpose: 'Recall what the tenant memory already holds on this topic', scope: query });
  }
  const clauses = facts.clauses.length > 0 ? facts.clauses : [facts.text];
  for (const clause of clauses.slice(0, MAX_ANALYSIS_STEPS)) {
    drafts.push({ tool: 'text_analysis', purpose: `Analyse: ${truncate(clause, 80)}`, scope: clause });
  }
  if (DELIVERY_INTENT.test(input)) {
    drafts.push({
      tool: 'webhook_delivery',
      purpose: "The input asks for the result to be delivered: send it to the tenant's configured webhook",
      scope: 'result',
    });
  }
  const steps: PlanStep[] = drafts.slice(0, MAX_PLAN_STEPS).map((d, i) => ({
    id: `step_${i + 1}`,
    tool: d.tool,
    effect: TOOLS[d.tool].effect,
    purpose: d.purpose,
    scope: d.scope,
  }));
  return { planner: 'local-deterministic', steps };
}

export const localPlanner: PlanningProvider = {
  name: 'local-deterministic',
  plan: async ({ input, memory }) => planLocally(input, memory),
};
