// The nudge that moves runs awaiting approval onto a newer build (workflows/run-resume.ts): the
// `upgrade-check` signal, sent to every run awaiting approval pinned to a build other than the ones
// named. A run whose target build did not change just goes on waiting. Sent by `npm run deploy -- ramp|
// promote` (runtime/deployments.ts) and, as a safety net for a routing change made any other way (the
// Temporal CLI, say), by the reconciler (activities/reconcile.ts) for runs left on a build that is
// neither current nor ramping. Raw workflow-service calls: nothing here decodes a payload.
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { AGENT_RUN_WORKFLOW } from '../domain/runs/run-input.ts';
import { RunStatusKey } from '../domain/runs/search-attributes.ts';
import { upgradeCheckSignal } from '../workflows/messages.ts';

type WorkflowService = Client['workflowService'];

export const AWAITING_APPROVAL_QUERY = `WorkflowType = '${AGENT_RUN_WORKFLOW}' AND ExecutionStatus = 'Running' AND ${RunStatusKey.name} = 'awaiting_approval'`;

/** The visibility filter of executions pinned to `buildId` of `deploymentName`. */
export const onBuild = (deploymentName: string, buildId: string) => `TemporalWorkerDeploymentVersion = '${deploymentName}:${buildId}'`;

/** Signals every run awaiting approval pinned to another build than `exceptBuilds`; returns how many. */
export async function nudgeWaitingRuns(
  service: WorkflowService,
  target: { namespace: string; deploymentName: string; exceptBuilds: string[]; identity: string },
): Promise<number> {
  const others = target.exceptBuilds.map((b) => ` AND TemporalWorkerDeploymentVersion != '${target.deploymentName}:${b}'`).join('');
  const query = `${AWAITING_APPROVAL_QUERY} AND TemporalWorkerDeploymentVersion STARTS_WITH '${target.deploymentName}:'${others}`;
  let nudged = 0;
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await service.listWorkflowExecutions({ namespace: target.namespace, query, pageSize: 500, ...(nextPageToken ? { nextPageToken } : {}) });
    for (const execution of page.executions ?? []) {
      await service
        .signalWorkflowExecution({
          namespace: target.namespace,
          workflowExecution: { workflowId: execution.execution?.workflowId ?? '', runId: execution.execution?.runId ?? '' },
          signalName: upgradeCheckSignal.name,
          identity: target.identity,
          requestId: randomUUID(),
        })
        .then(() => nudged++)
        // Closed in between: nothing to move.
        .catch(() => {});
    }
    nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
  } while (nextPageToken);
  return nudged;
}

/** The deployment's current and ramping builds (none when it has no routing yet, or does not exist). */
export async function routedBuilds(service: WorkflowService, namespace: string, deploymentName: string): Promise<string[]> {
  const described = await service.describeWorkerDeployment({ namespace, deploymentName }).catch(() => null);
  const routing = described?.workerDeploymentInfo?.routingConfig;
  return [routing?.currentDeploymentVersion?.buildId, routing?.rampingDeploymentVersion?.buildId].filter((b): b is string => !!b);
}
