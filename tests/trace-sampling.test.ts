// Tracing at production cost: 10 % of new traces, parent-based, unless OTEL_TRACES_SAMPLER says
// otherwise (the SDK then reads it and OTEL_TRACES_SAMPLER_ARG itself); probes and scrapes never.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { isTracedRequest } from '../api/middleware/server-span.ts';
import { ROOT_CONTEXT } from '@opentelemetry/api';
import { tracing } from '@opentelemetry/sdk-node';
import { DEFAULT_TRACE_RATIO, headSamplingFor, samplerFor, sentTo } from '../runtime/telemetry.ts';

describe('the sampler', () => {
  it('with no OTEL_TRACES_SAMPLER: parent-based, 10 % of new traces', () => {
    expect(DEFAULT_TRACE_RATIO).toBe(0.1);
    expect(samplerFor({})?.toString()).toBe(
      'ParentBased{root=HeadDecided{0.1}, remoteParentSampled=AlwaysOnSampler, remoteParentNotSampled=AlwaysOffSampler, localParentSampled=AlwaysOnSampler, localParentNotSampled=AlwaysOffSampler}',
    );
  });

  it('with OTEL_TRACES_SAMPLER set: none of ours, so the SDK takes the standard variables; and no draw in the API', () => {
    expect(samplerFor({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.5' })).toBeUndefined();
    expect(samplerFor({ OTEL_TRACES_SAMPLER: 'always_on' })).toBeUndefined();
    expect(headSamplingFor({ OTEL_TRACES_SAMPLER: 'always_on' })).toBeUndefined();
    // Other propagators: the API cannot tell from two headers that a request brings no trace.
    expect(headSamplingFor({ OTEL_PROPAGATORS: 'b3' })).toBeUndefined();
    expect(headSamplingFor({})?.ratio).toBe(DEFAULT_TRACE_RATIO);
  });

  it("follows the API's draw for a new trace, and samples any other new trace by its id", () => {
    const sampler = samplerFor({}) as tracing.Sampler;
    const key = headSamplingFor({})?.decisionKey as symbol;
    const decide = (context: typeof ROOT_CONTEXT, traceId: string) => sampler.shouldSample(context, traceId, 'GET', 1, {}, []).decision;
    const high = 'f'.repeat(8) + '0'.repeat(24); // dropped by a 10 % ratio (its four words XOR to the top)
    const low = '0'.repeat(31) + '1'; // kept by it
    expect(decide(ROOT_CONTEXT.setValue(key, true), high)).toBe(tracing.SamplingDecision.RECORD_AND_SAMPLED);
    expect(decide(ROOT_CONTEXT.setValue(key, false), low)).toBe(tracing.SamplingDecision.NOT_RECORD);
    expect(decide(ROOT_CONTEXT, high)).toBe(tracing.SamplingDecision.NOT_RECORD);
    expect(decide(ROOT_CONTEXT, low)).toBe(tracing.SamplingDecision.RECORD_AND_SAMPLED);
  });
});

describe('requests never traced', () => {
  it('/health and /metrics, with or without a query string; everything else is', () => {
    for (const url of ['/health', '/health?probe=1', '/metrics']) expect(isTracedRequest(url)).toBe(false);
    for (const url of ['/v1/agent-runs', '/healthz', '/v1/health', '/']) expect(isTracedRequest(url)).toBe(true);
  });
});

describe('requests to the collector', () => {
  it("are never traced: the exporter's own, a retry among them", () => {
    const toCollector = sentTo('http://127.0.0.1:4318');
    expect(toCollector({ hostname: '127.0.0.1', port: '4318', path: '/v1/traces' })).toBe(true);
    expect(toCollector({ hostname: '127.0.0.1', port: 4319, path: '/v1/traces' })).toBe(false);
    expect(toCollector({ hostname: 'upstream.example', port: '4318' })).toBe(false);
    // Ports left to the protocol's default.
    expect(sentTo('https://collector.example')({ host: 'collector.example', protocol: 'https:' })).toBe(true);
    expect(sentTo('https://collector.example')({ host: 'collector.example', protocol: 'http:' })).toBe(false);
    expect(sentTo('not a url')({ hostname: '127.0.0.1', port: '4318' })).toBe(false);
  });
});

describe('starting tracing', () => {
  it('patches node:http and node:https, then leaves no require hook: a later require formats no stack trace', () => {
    // A fresh process run as the services run (tsx): the instrumentations' require hook made every
    // require format a stack trace, whose source maps then filled one of V8's maps (runtime/telemetry.ts).
    const script = `
      import http from 'node:http';
      import https from 'node:https';
      import Module, { createRequire } from 'node:module';
      const plain = { require: Module.prototype.require, getBuiltinModule: process.getBuiltinModule };
      const { startTelemetry } = await import('./runtime/telemetry.ts');
      startTelemetry({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' });
      let stacks = 0;
      Error.prepareStackTrace = (error, frames) => {
        stacks += 1;
        return [String(error), ...frames.map((frame) => '    at ' + frame)].join('\\n');
      };
      createRequire(import.meta.url)('pino');
      console.log(JSON.stringify({
        requireHook: Module.prototype.require !== plain.require || process.getBuiltinModule !== plain.getBuiltinModule,
        stacks,
        patched: [http.request, http.get, https.request].map((f) => f.__wrapped === true),
      }));
      process.exit(0);
    `;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 });
    expect(child.stderr).toBe('');
    expect(JSON.parse(child.stdout)).toEqual({ requireHook: false, stacks: 0, patched: [true, true, true] });
  });
});
