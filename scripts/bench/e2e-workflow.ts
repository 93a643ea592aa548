// Row 11's anchor: a raw Temporal workflow in the shape of one analysis run of the service on the local
// provider (workflows/agent-run.ts), bundled alone for the anchor's own worker
// (scripts/bench/e2e-anchor-worker.ts). The same activities and local activities in the same order, so
// the same workflow tasks, and the same Postgres write transactions: each state change of the service
// is a local activity writing twice (its projection row and its journey event), as
// activities/projection.ts does; the hold and the settlement write once each. None of the service's
// own work: no search attributes, patches, details, payload codec, reads or run logic.
import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { AnchorActivities } from './e2e-anchor-activities.ts';

export interface AnchorRunInput {
  runId: string;
  /** Tool steps of the plan (runTool activities): those of the service's run, as counted in the same bench. */
  toolSteps: number;
}

// The service's timeouts and retries (workflows/run-activities.ts).
const retry = { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumInterval: '30 seconds' } as const;
const remote = proxyActivities<AnchorActivities>({ startToCloseTimeout: '30 seconds', retry });
const local = proxyLocalActivities<AnchorActivities>({ startToCloseTimeout: '30 seconds', retry });

export async function anchorRunWorkflow({ runId, toolSteps }: AnchorRunInput): Promise<string> {
  let seq = 0;
  const move = () => local.recordMove(runId, ++seq);
  await move(); // accepted
  await move(); // planning (estimate)
  await remote.work(runId, 0); // estimateRun
  await move(); // reserve
  await remote.work(runId, 1); // reserveCredits: the hold
  await move(); // plan
  await remote.work(runId, 0); // planRun
  await move(); // executing
  for (let i = 0; i < toolSteps; i++) {
    if (i > 0) await move(); // the step before finished
    await remote.work(runId, 0); // runTool
  }
  await move(); // the last step finished
  await move(); // verifying
  await remote.work(runId, 0); // verifyRun
  await move(); // settle
  await remote.work(runId, 1); // settleRun: the charge
  await move(); // the end
  await local.work(runId, 0); // the end's notification targets
  return 'ended';
}
