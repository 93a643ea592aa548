// Run by the reconcile Schedule (runtime/schedules.ts) every RECONCILE_INTERVAL_SECONDS:
// starts or ends runs whose workflow never started (activities/reconcile.ts).
import { proxyActivities, setWorkflowOptions } from '@temporalio/workflow';
import type { createActivities } from '../activities/index.ts';
import type { ReconcileOutcome } from '../activities/reconcile.ts';
import { versioned } from './versioning.ts';

const { reconcileStrandedRuns } = proxyActivities<ReturnType<typeof createActivities>>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 5 },
});

export async function reconcileRunsWorkflow(): Promise<ReconcileOutcome> {
  return reconcileStrandedRuns();
}

/** Minutes long: it ends on the build it started on, which then drains quickly. */
setWorkflowOptions(versioned('PINNED'), reconcileRunsWorkflow);
