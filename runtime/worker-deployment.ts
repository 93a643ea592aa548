// Worker Versioning (Temporal Worker Deployments): which deployment and build a worker serves, and the
// first build's promotion. A run's workflow is pinned to the build it started on (workflows/agent-run.ts),
// so a deploy never replays a run on code it did not start with; docs/operations.md ("Deploys") has the
// blue-green procedure and runtime/deployments.ts the commands behind `npm run deploy`.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { NativeConnection, WorkerDeploymentOptions } from '@temporalio/worker';
import type { Logger } from 'pino';
import type { VersioningConfig } from '../config/env.ts';

/** The build id of workers that bundle the workflows from source (npm start, the tests): one build at a time. */
export const SOURCE_BUILD_ID = 'dev';

/**
 * What the worker runs, named: WORKER_BUILD_ID when the release sets one, else the workflow bundle's content
 * hash (a bundle built from other code is another build), else `dev` for a worker that bundles from source.
 */
export function workerBuildId(config: VersioningConfig, bundlePath: string | undefined): string {
  if (config.buildId) return config.buildId;
  if (!bundlePath) return SOURCE_BUILD_ID;
  return `wf-${createHash('sha256').update(readFileSync(bundlePath)).digest('hex').slice(0, 12)}`;
}

/** The worker's deployment options; PINNED unless a workflow says otherwise (setWorkflowOptions in workflows/). */
export function deploymentOptions(config: VersioningConfig, buildId: string): WorkerDeploymentOptions | undefined {
  if (!config.enabled) return undefined;
  return { version: { deploymentName: config.deploymentName, buildId }, useWorkerVersioning: true, defaultVersioningBehavior: 'PINNED' };
}

/** How long a new build may take to appear in its deployment after its worker starts polling. */
const REGISTRATION_TIMEOUT_MS = 30_000;

/**
 * Makes this build current when the deployment has none (its first build ever), or always for a source
 * build (npm start serves one build). Otherwise the build waits beside the current one for an operator's
 * `npm run deploy -- ramp|promote`. Without a current build, new runs would wait for unversioned workers.
 */
export async function promoteFirstBuild(
  connection: NativeConnection,
  options: { namespace: string; deploymentName: string; buildId: string; logger: Logger },
): Promise<void> {
  const { namespace, deploymentName, buildId, logger } = options;
  const service = connection.workflowService;
  const deadline = Date.now() + REGISTRATION_TIMEOUT_MS;
  for (;;) {
    const described = await service.describeWorkerDeployment({ namespace, deploymentName }).catch(() => null);
    const info = described?.workerDeploymentInfo;
    if (info?.versionSummaries?.some((v) => v.deploymentVersion?.buildId === buildId)) {
      const current = info.routingConfig?.currentDeploymentVersion?.buildId;
      if (current === buildId) return;
      if (current && buildId !== SOURCE_BUILD_ID) {
        logger.info(
          { deployment: deploymentName, build: buildId, current },
          'build is polling beside the current build; route runs to it with npm run deploy -- ramp <percent> | promote',
        );
        return;
      }
      // Conflict-free: two first workers of one build set the same current version.
      await service.setWorkerDeploymentCurrentVersion({ namespace, deploymentName, buildId, ignoreMissingTaskQueues: true });
      logger.info({ deployment: deploymentName, build: buildId }, 'build made current');
      return;
    }
    if (Date.now() > deadline) throw new Error(`Build ${buildId} did not appear in worker deployment ${deploymentName} within ${REGISTRATION_TIMEOUT_MS} ms.`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
