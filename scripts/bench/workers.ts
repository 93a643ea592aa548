// Row 11's Temporal workers, each in its own process: the service's (bin/worker.ts as `npm run worker`
// runs it, NODE_ENV=production, on a workflow bundle built as `npm run build` builds it) and the
// anchor's (scripts/bench/e2e-anchor-worker.ts: a bare SDK worker of the raw workflow).
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { projectRoot } from '../../config/paths.ts';
import { BUNDLER_LOGGER, bundleServiceWorkflows } from '../../runtime/workflow-bundle.ts';
import { withoutUserTemporalSettings } from '../../config/temporal-env.ts';
import { freePort } from '../../tests/support/free-port.ts';
import type { AnchorWorkerArgs } from './e2e-anchor-worker.ts';
import { type ApiSettings, benchServiceEnv, POOL_SIZE, type Server, startLoggingChild } from './processes.ts';

/** `code` written to `file`. */
function written(file: string, code: string): string {
  writeFileSync(file, code);
  return file;
}

/** Both sides' workflow bundles, built into `dir` before anything is measured (neither worker bundles at start-up). */
export async function bundleWorkflows(dir: string): Promise<{ service: string; anchor: string }> {
  return {
    // The service's as `npm run build` bundles them (runtime/workflow-bundle.ts); the anchor's alone, as the SDK bundles by default.
    service: written(path.join(dir, 'workflow-bundle.js'), await bundleServiceWorkflows()),
    anchor: written(
      path.join(dir, 'anchor-bundle.js'),
      (await bundleWorkflowCode({ workflowsPath: path.join(projectRoot, 'scripts', 'bench', 'e2e-workflow.ts'), logger: BUNDLER_LOGGER })).code,
    ),
  };
}

/** bin/worker.ts in production on `bundlePath`, the local provider, its metrics on ports of its own. */
export async function startServiceWorker(s: ApiSettings & { bundlePath: string }): Promise<Server> {
  const env: NodeJS.ProcessEnv = {
    ...benchServiceEnv(s, 0),
    NODE_ENV: 'production',
    WORKFLOW_BUNDLE_PATH: s.bundlePath,
    DEFAULT_PROVIDER: 'local',
    METRICS_PORT: String(await freePort()),
    TEMPORAL_METRICS_PORT: String(await freePort()),
    ...s.env,
  };
  return startLoggingChild(s.name ?? 'worker', [path.join(projectRoot, 'bin', 'worker.ts')], env, (line) => line.includes('"worker running"'));
}

/** The anchor's worker (scripts/bench/e2e-anchor-worker.ts) on `taskQueue`, writing to `databaseUrl`. */
export function startAnchorWorker(a: Omit<AnchorWorkerArgs, 'poolSize'>): Promise<Server> {
  const env = { ...withoutUserTemporalSettings({ PATH: process.env.PATH, HOME: process.env.HOME }), NODE_ENV: 'production' };
  const args: AnchorWorkerArgs = { ...a, poolSize: POOL_SIZE };
  return startLoggingChild('anchor-worker', [path.join(projectRoot, 'scripts', 'bench', 'e2e-anchor-worker.ts'), JSON.stringify(args)], env, (line) =>
    line.includes('anchor worker running'),
  );
}
