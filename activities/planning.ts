// Estimate and plan. Both use the configured planning provider, so the
// estimate prices the same plan the run will follow.
import type { PlanningProvider } from '../domain/planning/plan.ts';
import { estimateUsage, type PricingTable } from '../domain/pricing.ts';

export function planningActivities(deps: { planner: PlanningProvider; pricing: PricingTable }) {
  return {
    async estimateRun(input: { input: string; memory: boolean }) {
      const plan = await deps.planner.plan(input);
      return estimateUsage(input.input, plan, deps.pricing);
    },
    planRun(input: { input: string; memory: boolean }) {
      return deps.planner.plan(input);
    },
  };
}
