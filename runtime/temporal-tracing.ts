// Temporal's OpenTelemetry interceptors (@temporalio/interceptors-opentelemetry, which targets the
// OpenTelemetry 1.x SDK: see docs/observability.md for the pinned set). The client's interceptor
// carries the HTTP request's trace into workflow start; the worker's carry it into the workflow
// (whose spans reach this process's span processor through a sink) and each activity. The
// workflow interceptor module is part of every workflow bundle, so a bundle built once works with
// tracing on or off; off, its spans go to a processor that drops them.
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

/** The workflow interceptor modules to bundle with the workflows (scripts/bundle-workflows.ts, the tests' bundle). */
export const WORKFLOW_INTERCEPTOR_MODULES = [createRequire(import.meta.url).resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors')];

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
