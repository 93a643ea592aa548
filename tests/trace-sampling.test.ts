// Tracing at production cost: 10 % of new traces, parent-based, unless OTEL_TRACES_SAMPLER says
// otherwise (the SDK then reads it and OTEL_TRACES_SAMPLER_ARG itself); probes and scrapes never.
import { describe, expect, it } from 'vitest';
import { isTracedRequest } from '../api/middleware/server-span.ts';
import { DEFAULT_TRACE_RATIO, samplerFor } from '../runtime/telemetry.ts';

describe('the sampler', () => {
  it('with no OTEL_TRACES_SAMPLER: parent-based, 10 % of new traces', () => {
    expect(DEFAULT_TRACE_RATIO).toBe(0.1);
    expect(samplerFor({})?.toString()).toBe(
      'ParentBased{root=TraceIdRatioBased{0.1}, remoteParentSampled=AlwaysOnSampler, remoteParentNotSampled=AlwaysOffSampler, localParentSampled=AlwaysOnSampler, localParentNotSampled=AlwaysOffSampler}',
    );
  });

  it('with OTEL_TRACES_SAMPLER set: none of ours, so the SDK takes the standard variables', () => {
    expect(samplerFor({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.5' })).toBeUndefined();
    expect(samplerFor({ OTEL_TRACES_SAMPLER: 'always_on' })).toBeUndefined();
  });
});

describe('requests never traced', () => {
  it('/health and /metrics, with or without a query string; everything else is', () => {
    for (const url of ['/health', '/health?probe=1', '/metrics']) expect(isTracedRequest(url)).toBe(false);
    for (const url of ['/v1/agent-runs', '/healthz', '/v1/health', '/']) expect(isTracedRequest(url)).toBe(true);
  });
});
