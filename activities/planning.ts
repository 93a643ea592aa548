// Estimate and plan. Both use the configured planning provider, so the
// estimate prices the same plan the run will follow.
import type { PlanningProvider } from '../domain/planning/plan.ts';
import { estimateRunUsage, type PricingTable } from '../domain/pricing.ts';

export function planningActivities(deps: { planner: PlanningProvider; pricing: PricingTable }) {
  return {
    estimateRun(input: { input: string; memory: boolean }) {
      return estimateRunUsage(deps.planner, input, deps.pricing);
    },
    planRun(input: { input: string; memory: boolean }) {
      return deps.planner.plan(input);
    },
  };
}
