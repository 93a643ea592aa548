// The default planning provider: no account, no network, no model. Its plan
// follows from the requested actions of the input: key-phrase extraction over
// the analysis clauses (grouped into at most MAX_ANALYSIS_STEPS steps) to
// prepare them, a memory recall when memory is on, and one webhook delivery
// when the input asks for the result to be sent (the one external effect,
// which needs approval). Preparing is not performing: without a model nothing
// here summarises, reviews or compares, so every analysis action is a plan gap
// saying what would perform it, as is every action no tool can perform.
import { analyzeObjective, truncate } from '../text/analyze.ts';
import { TOOLS, type ToolId } from '../tools.ts';
import { withDeliveryMessages } from './delivery-steps.ts';
import type { Plan, PlanningProvider, PlanStep } from './plan.ts';
import { missingMaterialReason, needsModelReason, type RequestedAction, requestedActions, unsupportedReason } from './requested-actions.ts';

const MAX_ANALYSIS_STEPS = 8;
/** One recall, the analysis steps, one delivery. */
export const MAX_PLAN_STEPS = MAX_ANALYSIS_STEPS + 2;

/** The local planner plans built-in tools only. */
type Draft = Omit<PlanStep, 'id' | 'effect' | 'tool'> & { tool: ToolId };

/** Splits `items` into at most `max` consecutive groups of near-equal size. */
function groups<T>(items: T[], max: number): T[][] {
  const size = Math.ceil(items.length / max);
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Key-phrase extraction over the analysis clauses: it prepares them and covers (carries out) none. */
function preparationDrafts(actions: RequestedAction[]): (Draft & { prepares: number[] })[] {
  return groups(actions, MAX_ANALYSIS_STEPS).map((group) => ({
    tool: 'text_analysis' as ToolId,
    purpose: `Extract key phrases (prepares, does not perform): ${truncate(group.map((a) => a.clause).join('; '), 80)}`,
    scope: group.map((a) => a.clause).join('\n'),
    covers: [],
    prepares: group.map((a) => a.n),
  }));
}

/** Why the local plan leaves `a` undone. */
function gapReason(a: RequestedAction, preparedBy: string[]): string {
  if (a.kind === 'unsupported') return unsupportedReason(a);
  if (a.missing) return missingMaterialReason(a);
  if (a.messageFrom !== undefined)
    return `sends the result of action ${a.messageFrom}, which needs a model; this run's provider is local (no model), so nothing was sent`;
  return needsModelReason(a, preparedBy);
}

export function planLocally(input: string, memory: boolean): Plan {
  const actions = requestedActions(input, { memory });
  const drafts: Draft[] = [];
  if (memory) {
    const facts = analyzeObjective(input);
    const query =
      facts.keyTerms
        .slice(0, 3)
        .map((k) => k.term)
        .join(' ') || truncate(facts.text, 80);
    drafts.push({ tool: 'memory_recall', purpose: 'Recall what the tenant memory already holds on this topic', scope: query, covers: [] });
  }
  const preparations = preparationDrafts(actions.filter((a) => a.kind === 'analysis'));
  drafts.push(...preparations.map(({ prepares: _, ...d }) => d));
  // Without a model, a delivery can send only the message the request gives: a result to send needs a model.
  const deliveries = actions.filter((a) => a.kind === 'delivery' && a.message !== undefined);
  for (const a of deliveries) {
    drafts.push({
      tool: 'webhook_delivery',
      purpose: `Send the message the request gives (action ${a.n}, "${truncate(a.clause, 80)}") to the tenant's configured webhook; delivered only after approval`,
      scope: 'message',
      covers: [a.n],
    });
  }
  const steps: PlanStep[] = drafts.map((d, i) => ({ ...d, id: `step_${i + 1}`, effect: TOOLS[d.tool].effect }));
  const firstPreparation = memory ? 1 : 0;
  const preparedBy = (n: number) => preparations.flatMap((p, i) => (p.prepares.includes(n) ? [steps[firstPreparation + i]!.id] : []));
  const gaps = actions.filter((a) => !deliveries.includes(a)).map((a) => ({ action: a.n, reason: gapReason(a, preparedBy(a.n)) }));
  return withDeliveryMessages({ planner: 'local-deterministic', steps, gaps }, actions);
}

export const localPlanner: PlanningProvider = {
  name: 'local-deterministic',
  plan: async ({ input, memory }) => planLocally(input, memory),
};
