// Temporal's OpenTelemetry interceptors (@temporalio/interceptors-opentelemetry, which targets the
// OpenTelemetry 1.x SDK: see docs/observability.md for the pinned set). The client's interceptor
// carries the HTTP request's trace into workflow start; the worker's carry it into the workflow
// (whose spans reach this process's span processor through a sink) and each activity. The
// workflow interceptor module is bundled only into the traced variant of the workflow bundle: even
// with its spans dropped, it gives every cached workflow one more AsyncLocalStorage (which tags every
// promise the workflow makes) and every activation its span work, about a fifth of the worker's CPU
// per run (docs/performance.md). Either variant replays the other's histories: the interceptors
// change headers, not commands, and the SDK's flags keep their yields where they were.
import { createRequire } from 'node:module';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  OpenTelemetryWorkflowClientInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import type { InjectedSinks, WorkerInterceptors } from '@temporalio/worker';
import { telemetry } from './telemetry.ts';

const OPENTELEMETRY_WORKFLOW_INTERCEPTORS = createRequire(import.meta.url).resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors');

/** The workflow interceptor modules to bundle with the workflows: Temporal's OpenTelemetry ones when `traced`. */
export function workflowInterceptorModules(traced: boolean): string[] {
  return traced ? [OPENTELEMETRY_WORKFLOW_INTERCEPTORS] : [];
}

/** Where `npm run build` writes the traced variant of the bundle at `bundlePath`: beside it, as `<name>.traced.js`. */
export function tracedBundlePath(bundlePath: string): string {
  return bundlePath.replace(/(\.js)?$/, '.traced.js');
}

/** The bundle a worker loads: the traced variant while tracing is on. */
export function workflowBundleFor(bundlePath: string, traced = telemetry().enabled): string {
  return traced ? tracedBundlePath(bundlePath) : bundlePath;
}

/** The client interceptors: none while tracing is off, so starting a workflow costs nothing more. */
export function tracingClientInterceptors(): WorkflowClientInterceptor[] {
  return telemetry().enabled ? [new OpenTelemetryWorkflowClientInterceptor()] : [];
}

/** The worker's activity interceptors and the workflow span sink. */
export function tracingWorkerOptions(): { activity: NonNullable<WorkerInterceptors['activity']>; sinks: InjectedSinks<Record<string, never>> } {
  const t = telemetry();
  return {
    activity: t.enabled
      ? [(ctx) => ({ inbound: new OpenTelemetryActivityInboundInterceptor(ctx), outbound: new OpenTelemetryActivityOutboundInterceptor(ctx) })]
      : [],
    sinks: { exporter: makeWorkflowExporter(t.spanProcessor, t.resource) } as never,
  };
}
