// How the service's workflows are bundled for a worker, the same way everywhere: `npm run build`,
// a worker bundling from source (`npm start`), the tests, the drills and the bench. The entry point,
// the modules preloaded into the sandbox (workflows/sandbox-preload.ts), and the interceptors.
import path from 'node:path';
import { type BundleOptions, bundleWorkflowCode } from '@temporalio/worker';
import { projectRoot } from '../config/paths.ts';

/** The workflows the worker registers. */
export const WORKFLOWS_PATH = path.join(projectRoot, 'workflows', 'index.ts');

/** Set in the sandbox before the SDK freezes its globals. */
export const WORKFLOW_PRELOAD_MODULES = [path.join(projectRoot, 'workflows', 'sandbox-preload.ts')];

/** The bundler's warnings and errors, not its progress lines (callers say what they built). */
export const BUNDLER_LOGGER: NonNullable<BundleOptions['logger']> = {
  log() {},
  trace() {},
  debug() {},
  info() {},
  warn: (message, meta) => console.warn(message, meta ?? ''),
  error: (message, meta) => console.error(message, meta ?? ''),
};

/** The service's workflows bundled, with `workflowInterceptorModules` (the traced variant's, a drill's). */
export async function bundleServiceWorkflows(options: Pick<BundleOptions, 'workflowInterceptorModules'> = {}): Promise<string> {
  const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, preloadModules: WORKFLOW_PRELOAD_MODULES, logger: BUNDLER_LOGGER, ...options });
  return code;
}
