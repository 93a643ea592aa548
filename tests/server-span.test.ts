// Unit tests: the API's server span (api/middleware/server-span.ts) over a real socket, with the
// SDK's own tracer provider and context manager and an in-memory exporter. What a request pays for
// is what it is traced for: /health nothing; a dropped read no context; a kept request a named span.
import type http from 'node:http';
import { context, propagation, trace } from '@opentelemetry/api';
import { node, tracing } from '@opentelemetry/sdk-node';
import Koa from 'koa';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type HeadSampling, serverSpan } from '../api/middleware/server-span.ts';
import { PromiseContextManager } from '../runtime/promise-context-manager.ts';
import { headSamplingFor, samplerFor } from '../runtime/telemetry.ts';

const exporter = new tracing.InMemorySpanExporter();
let keep: boolean | 'default' = true;
const defaultSampler = samplerFor({}) as tracing.Sampler;
// Samples what `keep` says, or as our default sampler does, so one provider serves every case.
const sampler: tracing.Sampler = {
  shouldSample: (...args) =>
    keep === 'default'
      ? defaultSampler.shouldSample(...args)
      : { decision: keep ? tracing.SamplingDecision.RECORD_AND_SAMPLED : tracing.SamplingDecision.NOT_RECORD },
  toString: () => 'test',
};
// Registered as runtime/telemetry.ts registers it: our context manager and the W3C propagator.
const provider = new node.NodeTracerProvider({ sampler, spanProcessors: [new tracing.SimpleSpanProcessor(exporter)] });

/** What the handler saw: the active span's flags, or none. */
let seen: { active: boolean; sampled?: boolean } | undefined;
const servers: http.Server[] = [];
let base: string;
/** Each HeadSampling ratio's app: the API's own draw for a new trace. */
const drawing = new Map<number, string>();

/** An app with the server span and a handler that notes what it saw; its base URL. */
async function listen(head?: HeadSampling): Promise<string> {
  const app = new Koa();
  app.use((ctx, next) => {
    ctx.state.requestId = 'req_test';
    return next();
  });
  app.use(serverSpan(head));
  app.use((ctx) => {
    const span = trace.getActiveSpan();
    seen = span ? { active: true, sampled: (span.spanContext().traceFlags & 1) === 1 } : { active: false };
    (ctx as { _matchedRoute?: string })._matchedRoute = ctx.path === '/health' ? '/health' : '/v1/things/:id';
    ctx.body = { ok: true };
  });
  const server = app.listen(0, '127.0.0.1');
  servers.push(server);
  await new Promise((r) => server.once('listening', r));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

beforeAll(async () => {
  provider.register({ contextManager: new PromiseContextManager().enable() });
  base = await listen();
  const head = headSamplingFor({}) as HeadSampling;
  for (const ratio of [0, 1]) drawing.set(ratio, await listen({ ...head, ratio }));
});

afterAll(async () => {
  for (const server of servers) server.close();
  await provider.shutdown();
  context.disable();
  trace.disable();
  propagation.disable();
});

afterEach(() => {
  exporter.reset();
  seen = undefined;
  keep = true;
});

describe('the server span', () => {
  it('is never made for /health: no span, no context, no traceparent', async () => {
    const res = await fetch(`${base}/health?probe=1`);
    expect(res.headers.get('traceparent')).toBeNull();
    expect(seen).toEqual({ active: false });
    expect(exporter.getFinishedSpans()).toEqual([]);
  });

  it('is named by the route, carries the request id and status, and continues a traceparent sent in', async () => {
    const incoming = `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`;
    const res = await fetch(`${base}/v1/things/42?x=secret`, { headers: { traceparent: incoming } });
    expect(res.headers.get('traceparent')).toMatch(new RegExp(`^00-${'a'.repeat(32)}-[0-9a-f]{16}-01$`));
    const [span] = exporter.getFinishedSpans();
    expect(span?.name).toBe('GET /v1/things/:id');
    expect((span as unknown as { parentSpanId?: string }).parentSpanId).toBe('b'.repeat(16));
    expect(span?.attributes).toEqual({
      'http.request.method': 'GET',
      'gws.request_id': 'req_test',
      'http.route': '/v1/things/:id',
      'http.response.status_code': 200,
    });
    expect(seen).toEqual({ active: true, sampled: true });
  });

  it('leaves a read the sampler dropped without a context, and keeps the decision for a write; neither names a trace', async () => {
    keep = false;
    const read = await fetch(`${base}/v1/things/42`);
    // No trace of it exists to look up.
    expect(read.headers.get('traceparent')).toBeNull();
    expect(seen).toEqual({ active: false });
    const write = await fetch(`${base}/v1/things/42`, { method: 'POST' });
    expect(write.headers.get('traceparent')).toBeNull();
    expect(seen).toEqual({ active: true, sampled: false });
    expect(exporter.getFinishedSpans()).toEqual([]);
  });
});

describe('the API drawing a new trace (our default sampler and propagators)', () => {
  it('records what it kept, although the trace id alone would drop nine in ten', async () => {
    keep = 'default';
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`${drawing.get(1)}/v1/things/${i}`);
      expect(res.headers.get('traceparent')).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
      expect(seen).toEqual({ active: true, sampled: true });
    }
    expect(exporter.getFinishedSpans()).toHaveLength(20);
  });

  it('leaves a read it dropped without a context, and gives a write the unsampled decision', async () => {
    keep = 'default';
    const read = await fetch(`${drawing.get(0)}/v1/things/42`);
    expect(read.headers.get('traceparent')).toBeNull();
    expect(seen).toEqual({ active: false });
    const write = await fetch(`${drawing.get(0)}/v1/things/42`, { method: 'POST' });
    expect(write.headers.get('traceparent')).toBeNull();
    expect(seen).toEqual({ active: true, sampled: false });
    expect(exporter.getFinishedSpans()).toEqual([]);
  });

  it('does not draw for a request that brings its trace: a sampled traceparent is continued', async () => {
    keep = 'default';
    const incoming = `00-${'c'.repeat(32)}-${'d'.repeat(16)}-01`;
    const res = await fetch(`${drawing.get(0)}/v1/things/42`, { headers: { traceparent: incoming } });
    expect(res.headers.get('traceparent')).toMatch(new RegExp(`^00-${'c'.repeat(32)}-[0-9a-f]{16}-01$`));
    expect(exporter.getFinishedSpans()).toHaveLength(1);
  });
});
