// The operator's side of Worker Versioning, behind `npm run deploy` (bin/deploy.ts): which build is current,
// which is ramping, how many runs each build still holds and whether an old build has drained; ramping and
// promoting a new build, after which every run awaiting approval is nudged to move to its target build
// (workflows/run-resume.ts). Raw workflow-service calls: nothing here decodes a payload, so no key is needed.
import { type Connection, isGrpcServiceError } from '@temporalio/client';
import proto from '@temporalio/proto';
import { AWAITING_APPROVAL_QUERY, nudgeWaitingRuns, onBuild } from '../services/upgrade-nudge.ts';

const { RoutingConfigUpdateState, VersionDrainageStatus, WorkerDeploymentVersionStatus } = proto.temporal.api.enums.v1;

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
        count(t, `ExecutionStatus = 'Running' AND ${onBuild(t.deploymentName, buildId)}`),
        count(t, `${AWAITING_APPROVAL_QUERY} AND ${onBuild(t.deploymentName, buildId)}`),
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

/** How long a ramp or promote waits, unless told otherwise, for the new build's workers to poll every task queue. */
export const REGISTRATION_WAIT_MS = 30_000;

export interface RoutingOptions {
  /** How long to wait for the build's workers to poll every task queue the current build polls (whenRegistered). */
  registrationWaitMs?: number;
  /** Called once, when the server first refuses the change for that reason and the wait begins. */
  onWaitingForWorkers?: () => void;
}

/**
 * Sends `percent` of new runs (and of the waiting runs that move) to `buildId`; the rest stay on the current
 * build. Waits up to `registrationWaitMs` for the build's workers to poll every task queue (whenRegistered).
 */
export async function rampBuild(t: DeploymentTarget, buildId: string, percent: number, options: RoutingOptions = {}): Promise<number> {
  await whenRegistered(options, () =>
    t.connection.workflowService.setWorkerDeploymentRampingVersion({
      namespace: t.namespace,
      deploymentName: t.deploymentName,
      buildId,
      percentage: percent,
      identity,
    }),
  );
  await untilRoutingPropagated(t);
  return await nudgeUntilMoved(t, buildId, false);
}

/** Makes `buildId` current: every new run starts on it, and the waiting runs move to it. Waits as rampBuild does. */
export async function promoteBuild(t: DeploymentTarget, buildId: string, options: RoutingOptions = {}): Promise<number> {
  await whenRegistered(options, () =>
    t.connection.workflowService.setWorkerDeploymentCurrentVersion({ namespace: t.namespace, deploymentName: t.deploymentName, buildId, identity }),
  );
  await untilRoutingPropagated(t);
  return await nudgeUntilMoved(t, buildId, true);
}

const GRPC_FAILED_PRECONDITION = 9;

/** The server refused to route to a build that does not yet poll every task queue the current build polls. */
export function isBuildMissingTaskQueues(err: unknown): boolean {
  return isGrpcServiceError(err) && err.code === GRPC_FAILED_PRECONDITION && /missing active task queues/i.test(err.details);
}

/**
 * Makes a routing change, retrying while the server refuses it because the build's workers do not yet poll
 * every task queue the current build polls. A worker registers its build with its first poll, one task
 * queue (workflow, activity) at a time, so a build is listed a moment before it could take every run; the
 * server would otherwise leave those queues unversioned. Past the wait the server's refusal is thrown.
 */
async function whenRegistered<T>(options: RoutingOptions, change: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + (options.registrationWaitMs ?? REGISTRATION_WAIT_MS);
  for (let attempt = 1; ; attempt++) {
    try {
      return await change();
    } catch (err) {
      if (!isBuildMissingTaskQueues(err) || Date.now() >= deadline) throw err;
      if (attempt === 1) options.onWaitingForWorkers?.();
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

const PROPAGATION_WAIT_MS = 15_000;
const NUDGE_PASSES_MS = 60_000;

/**
 * Waits, for up to PROPAGATION_WAIT_MS, until the new routing has reached the task queues: a run nudged
 * before that still sees its pinned build as its target and goes on waiting there. Best effort: past that
 * (seen with four workers on the dev server) the nudge passes go on anyway, and a run that did not move
 * gets the next pass, or the reconciler's.
 */
async function untilRoutingPropagated(t: DeploymentTarget): Promise<void> {
  const deadline = Date.now() + PROPAGATION_WAIT_MS;
  while (Date.now() < deadline) {
    const { workerDeploymentInfo: info } = await t.connection.workflowService.describeWorkerDeployment({
      namespace: t.namespace,
      deploymentName: t.deploymentName,
    });
    if (info?.routingConfigUpdateState !== RoutingConfigUpdateState.ROUTING_CONFIG_UPDATE_STATE_IN_PROGRESS) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * Nudges every run awaiting approval on another build than `buildId` (services/upgrade-nudge.ts), pass after
 * pass until one finds none or NUDGE_PASSES_MS passes: visibility may show a run awaiting approval a moment
 * after it began to wait, and a run that is still on an old build once a promotion is through gets another
 * nudge. After a ramp (most runs stay where they are) two passes, 3 s apart. Returns how many were nudged.
 */
async function nudgeUntilMoved(t: DeploymentTarget, buildId: string, untilNoneLeft: boolean): Promise<number> {
  const target = { namespace: t.namespace, deploymentName: t.deploymentName, exceptBuilds: [buildId], identity };
  const deadline = Date.now() + NUDGE_PASSES_MS;
  let total = 0;
  for (let pass = 1; ; pass++) {
    const nudged = await nudgeWaitingRuns(t.connection.workflowService, target);
    total += nudged;
    if ((untilNoneLeft && nudged === 0 && pass > 1) || (!untilNoneLeft && pass >= 2) || Date.now() > deadline) return total;
    await new Promise((resolve) => setTimeout(resolve, 3_000));
  }
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
