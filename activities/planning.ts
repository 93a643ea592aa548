// Estimate and local plan. The estimate resolves the model's provider through
// the tenant's routing policy (the same as chat) and prices the run the way it
// will go: the local planner's own plan, or the upstream agent loop's bounds.
import type { ModelId } from '../domain/models.ts';
import { withAnsweredMessages } from '../domain/planning/delivery-steps.ts';
import type { Plan } from '../domain/planning/plan.ts';
import type { NumberedPart } from './embedded/answer-part.ts';
import { estimateRun, type RunEstimateDeps } from '../services/model-layer.ts';

export function planningActivities(deps: RunEstimateDeps) {
  return {
    estimateRun(input: { tenantId: string; input: string; memory: boolean; model: ModelId }) {
      return estimateRun(deps, input);
    },
    planRun(input: { input: string; memory: boolean }) {
      return deps.planner.plan(input);
    },
    /** The plan with the answers written before the approval wait as the messages its deliveries send. */
    async answeredDeliveries(input: { plan: Plan; parts: NumberedPart[] }): Promise<Plan> {
      return withAnsweredMessages(input.plan, input.parts);
    },
  };
}
