// How the service's workflows are bundled for a worker, the same way everywhere: `npm run build`,
// a worker bundling from source (`npm start`), the tests, the drills and the bench. The entry point,
// the modules preloaded into the sandbox (workflows/sandbox-preload.ts), and the interceptors.
import path from 'node:path';
import { bundleWorkflowCode, type BundleOptions } from '@temporalio/worker';
import { projectRoot } from '../config/paths.ts';

/** The workflows the worker registers. */
export const WORKFLOWS_PATH = path.join(projectRoot, 'workflows', 'index.ts');

/** Set in the sandbox before the SDK freezes its globals. */
export const WORKFLOW_PRELOAD_MODULES = [path.join(projectRoot, 'workflows', 'sandbox-preload.ts')];

/** The service's workflows bundled, with `workflowInterceptorModules` (the traced variant's, a drill's). */
export async function bundleServiceWorkflows(options: Pick<BundleOptions, 'workflowInterceptorModules' | 'logger'> = {}): Promise<string> {
  const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, preloadModules: WORKFLOW_PRELOAD_MODULES, ...options });
  return code;
}
