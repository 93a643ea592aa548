// The reconciler: a row the API wrote whose workflow never started (the API
// died between the insert and the start, or Temporal was down and the client
// gave up) is started now if it has an Idempotency-Key (the client's retry
// would start it too), and ended start_failed if it has none (its client never
// learned the run id, so running it would be work nobody asked to follow). And a run awaiting approval
// left on a build that is neither current nor ramping (a promotion made without `npm run deploy`, or a
// nudge it missed) is nudged to move (services/upgrade-nudge.ts).
import { Context } from '@temporalio/activity';
import type { Db } from '../db/client.ts';
import { markStartFailed, possiblyStrandedRuns } from '../services/runs.ts';
import { runWorkflowExists, startRunWorkflow } from '../services/run-workflow.ts';
import { tenantById } from '../services/tenants.ts';
import { nudgeWaitingRuns, routedBuilds } from '../services/upgrade-nudge.ts';

export interface ReconcileDeps {
  db: Db;
  approvalTimeoutMs: number;
  /** A row younger than this is still being started by its API request. */
  reconcileGraceMs: number;
  /** The workers' Worker Deployment, when they are versioned. */
  deploymentName?: string;
}

export interface ReconcileOutcome {
  checked: number;
  started: string[];
  markedFailed: string[];
  /** Runs awaiting approval on a build no longer routed to, nudged to move (absent in results of older builds). */
  nudged?: number;
}

export function reconcileActivities(deps: ReconcileDeps) {
  return {
    async reconcileStrandedRuns(): Promise<ReconcileOutcome> {
      const { client, info } = Context.current();
      const candidates = await possiblyStrandedRuns(deps.db, new Date(Date.now() - deps.reconcileGraceMs), 200);
      const outcome: ReconcileOutcome = { checked: candidates.length, started: [], markedFailed: [] };
      for (const run of candidates) {
        if (await runWorkflowExists(client, run.id)) continue; // started; its worker just has not recorded progress yet
        if (run.idempotencyKey) {
          const tenant = await tenantById(deps.db, run.tenantId);
          await startRunWorkflow(client, { taskQueue: info.taskQueue, approvalTimeoutMs: deps.approvalTimeoutMs }, run, tenant.name);
          outcome.started.push(run.id);
        } else {
          await markStartFailed(deps.db, run.id);
          outcome.markedFailed.push(run.id);
        }
        Context.current().heartbeat();
      }
      if (deps.deploymentName) {
        const namespace = client.options.namespace;
        const routed = await routedBuilds(client.workflowService, namespace, deps.deploymentName);
        const target = { namespace, deploymentName: deps.deploymentName, exceptBuilds: routed, identity: 'gws-reconciler' };
        if (routed.length > 0) outcome.nudged = await nudgeWaitingRuns(client.workflowService, target);
      }
      return outcome;
    },
  };
}
