// `npm run build` step: bundles the workflows once, so production workers load
// prebuilt code instead of running webpack at start-up. Two variants: without and with
// Temporal's OpenTelemetry workflow interceptors (loaded while tracing is on).
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../config/paths.ts';
import { tracedBundlePath, workflowInterceptorModules } from '../runtime/temporal-tracing.ts';
import { bundleServiceWorkflows } from '../runtime/workflow-bundle.ts';

const outFile = path.join(projectRoot, 'dist', 'workflow-bundle.js');
mkdirSync(path.dirname(outFile), { recursive: true });
for (const traced of [false, true]) {
  const file = traced ? tracedBundlePath(outFile) : outFile;
  const code = await bundleServiceWorkflows({ workflowInterceptorModules: workflowInterceptorModules(traced) });
  writeFileSync(file, code);
  console.log(`workflow bundle: ${path.relative(projectRoot, file)} (${Math.round(code.length / 1024)} KiB)`);
}
