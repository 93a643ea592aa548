// Estimate and local plan. The estimate resolves the model's provider through
// the tenant's routing policy (the same as chat) and prices the run the way it
// will go: the local planner's own plan, or the upstream agent loop's bounds.
import type { ModelId } from '../domain/models.ts';
import { estimateRun, type RunEstimateDeps } from '../services/model-layer.ts';

export function planningActivities(deps: RunEstimateDeps) {
  return {
    estimateRun(input: { tenantId: string; input: string; memory: boolean; model: ModelId }) {
      return estimateRun(deps, input);
    },
    planRun(input: { input: string; memory: boolean }) {
      return deps.planner.plan(input);
    },
  };
}
