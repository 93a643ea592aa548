// The operator's side of Worker Versioning, behind `npm run deploy` (bin/deploy.ts): which build is current,
// which is ramping, how many runs each build still holds and whether an old build has drained; ramping and
// promoting a new build, after which every run awaiting approval is nudged to move to its target build
// (workflows/run-resume.ts). Raw workflow-service calls: nothing here decodes a payload, so no key is needed.
import { randomUUID } from 'node:crypto';
import type { Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { AGENT_RUN_WORKFLOW } from '../domain/runs/run-input.ts';
import { RunStatusKey } from '../domain/runs/search-attributes.ts';

const { RoutingConfigUpdateState, VersionDrainageStatus, WorkerDeploymentVersionStatus } = proto.temporal.api.enums.v1;

/** The signal every run awaiting approval gets after a routing change (workflows/messages.ts upgradeCheckSignal). */
const UPGRADE_CHECK_SIGNAL = 'upgrade-check';

export interface BuildStatus {
  buildId: string;
  /** inactive, current, ramping, draining or drained, as the server says. */
  status: string;
  /** Open executions pinned to this build (runs, and the short workflows), from visibility. */
  openExecutions: number;
  /** Of them, runs awaiting approval. */
  awaitingApproval: number;
  createdAt: string | null;
}

export interface DeploymentStatus {
  deploymentName: string;
  current: string | null;
  ramping: { buildId: string; percent: number } | null;
  builds: BuildStatus[];
}

export interface DeploymentTarget {
  connection: Connection;
  namespace: string;
  deploymentName: string;
}

const identity = `gws-deploy@${process.pid}`;

function statusName(status: number | null | undefined, drainage: number | null | undefined): string {
  if (status === WorkerDeploymentVersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_CURRENT) return 'current';
  if (status === WorkerDeploymentVersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_RAMPING) return 'ramping';
  if (status === WorkerDeploymentVersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_DRAINED || drainage === VersionDrainageStatus.VERSION_DRAINAGE_STATUS_DRAINED)
    return 'drained';
  if (status === WorkerDeploymentVersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_DRAINING || drainage === VersionDrainageStatus.VERSION_DRAINAGE_STATUS_DRAINING)
    return 'draining';
  return 'inactive';
}

async function count(t: DeploymentTarget, query: string): Promise<number> {
  const { count } = await t.connection.workflowService.countWorkflowExecutions({ namespace: t.namespace, query });
  return Number(count ?? 0);
}

const versionFilter = (t: DeploymentTarget, buildId: string) => `TemporalWorkerDeploymentVersion = '${t.deploymentName}:${buildId}'`;
const awaitingFilter = `WorkflowType = '${AGENT_RUN_WORKFLOW}' AND ExecutionStatus = 'Running' AND ${RunStatusKey.name} = 'awaiting_approval'`;

/** The deployment's routing and, per build, what it still holds. */
export async function deploymentStatus(t: DeploymentTarget): Promise<DeploymentStatus> {
  const { workerDeploymentInfo: info } = await t.connection.workflowService.describeWorkerDeployment({
    namespace: t.namespace,
    deploymentName: t.deploymentName,
  });
  const routing = info?.routingConfig;
  const rampingBuild = routing?.rampingDeploymentVersion?.buildId;
  const builds = await Promise.all(
    (info?.versionSummaries ?? []).map(async (v): Promise<BuildStatus> => {
      const buildId = v.deploymentVersion?.buildId ?? '';
      const [openExecutions, awaitingApproval] = await Promise.all([
        count(t, `ExecutionStatus = 'Running' AND ${versionFilter(t, buildId)}`),
        count(t, `${awaitingFilter} AND ${versionFilter(t, buildId)}`),
      ]);
      const created = v.createTime?.seconds;
      return {
        buildId,
        status: statusName(v.status, v.drainageInfo?.status ?? v.drainageStatus),
        openExecutions,
        awaitingApproval,
        createdAt: created ? new Date(Number(created) * 1000).toISOString() : null,
      };
    }),
  );
  builds.sort((a, b) => (a.createdAt ?? '').localeCompare(b.createdAt ?? ''));
  return {
    deploymentName: t.deploymentName,
    current: routing?.currentDeploymentVersion?.buildId ?? null,
    ramping: rampingBuild ? { buildId: rampingBuild, percent: routing?.rampingVersionPercentage ?? 0 } : null,
    builds,
  };
}

/** The build a ramp or promote means when none is named: the ramping one, else the newest that is not current. */
export function candidateBuild(status: DeploymentStatus): string | null {
  if (status.ramping) return status.ramping.buildId;
  const newer = status.builds.filter((b) => b.buildId !== status.current && b.status !== 'drained' && b.status !== 'draining');
  return newer.at(-1)?.buildId ?? null;
}

/** Sends `percent` of new runs (and of the waiting runs that move) to `buildId`; the rest stay on the current build. */
export async function rampBuild(t: DeploymentTarget, buildId: string, percent: number): Promise<number> {
  await t.connection.workflowService.setWorkerDeploymentRampingVersion({
    namespace: t.namespace,
    deploymentName: t.deploymentName,
    buildId,
    percentage: percent,
    identity,
  });
  await untilRoutingPropagated(t);
  return await nudgeWaitingRuns(t, buildId);
}

/** Makes `buildId` current: every new run starts on it, and the waiting runs move to it. */
export async function promoteBuild(t: DeploymentTarget, buildId: string): Promise<number> {
  await t.connection.workflowService.setWorkerDeploymentCurrentVersion({ namespace: t.namespace, deploymentName: t.deploymentName, buildId, identity });
  await untilRoutingPropagated(t);
  return await nudgeWaitingRuns(t, buildId);
}

const PROPAGATION_TIMEOUT_MS = 60_000;

/**
 * Waits until the new routing has reached the task queues: a run nudged before that would still see its
 * pinned build as its target and go on waiting there.
 */
async function untilRoutingPropagated(t: DeploymentTarget): Promise<void> {
  const deadline = Date.now() + PROPAGATION_TIMEOUT_MS;
  for (;;) {
    const { workerDeploymentInfo: info } = await t.connection.workflowService.describeWorkerDeployment({
      namespace: t.namespace,
      deploymentName: t.deploymentName,
    });
    if (info?.routingConfigUpdateState !== RoutingConfigUpdateState.ROUTING_CONFIG_UPDATE_STATE_IN_PROGRESS) return;
    if (Date.now() > deadline)
      throw new Error(`The new routing of ${t.deploymentName} did not reach its task queues within ${PROPAGATION_TIMEOUT_MS / 1000} s.`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * Wakes every run awaiting approval on another build than `buildId`: each checks whether its target build
 * changed and, if so, continues as new there. Returns how many were nudged.
 */
export async function nudgeWaitingRuns(t: DeploymentTarget, buildId: string): Promise<number> {
  const service = t.connection.workflowService;
  const query = `${awaitingFilter} AND TemporalWorkerDeploymentVersion != '${t.deploymentName}:${buildId}'`;
  let nudged = 0;
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await service.listWorkflowExecutions({ namespace: t.namespace, query, pageSize: 500, ...(nextPageToken ? { nextPageToken } : {}) });
    for (const execution of page.executions ?? []) {
      await service
        .signalWorkflowExecution({
          namespace: t.namespace,
          workflowExecution: { workflowId: execution.execution?.workflowId ?? '', runId: execution.execution?.runId ?? '' },
          signalName: UPGRADE_CHECK_SIGNAL,
          identity,
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

/**
 * Whether `buildId`'s workers may stop: the server says it is drained (no open execution is pinned to it, after
 * its visibility grace period), or it never took traffic and pins nothing.
 */
export function isDrained(status: DeploymentStatus, buildId: string): boolean {
  const build = status.builds.find((b) => b.buildId === buildId);
  if (!build) return true;
  return build.status === 'drained' || (build.status === 'inactive' && build.openExecutions === 0);
}
