// `npm run build` step: bundles the workflows once, so production workers load
// prebuilt code instead of running webpack at start-up.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { projectRoot } from '../config/paths.ts';
import { WORKFLOW_INTERCEPTOR_MODULES } from '../runtime/temporal-tracing.ts';

const outFile = path.join(projectRoot, 'dist', 'workflow-bundle.js');
const { code } = await bundleWorkflowCode({
  workflowsPath: path.join(projectRoot, 'workflows', 'index.ts'),
  workflowInterceptorModules: WORKFLOW_INTERCEPTOR_MODULES,
});
mkdirSync(path.dirname(outFile), { recursive: true });
writeFileSync(outFile, code);
console.log(`workflow bundle: ${path.relative(projectRoot, outFile)} (${Math.round(code.length / 1024)} KiB)`);
