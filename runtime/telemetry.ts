// Tracing with the OpenTelemetry Node SDK: HTTP (outgoing) and undici (fetch) instrumentations
// (the API makes its own server spans: api/middleware/server-span.ts; the pools their query spans:
// db/pool.ts),
// exported over OTLP/HTTP when the standard OTEL_EXPORTER_OTLP_ENDPOINT (or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set; 10 % of traces, parent-based, unless OTEL_TRACES_SAMPLER
// says otherwise; /health and /metrics never. When neither is set, or OTEL_SDK_DISABLED=true, no
// SDK starts: nothing is exported and nothing slows down. Every span passes ContentFreeProcessor
// first, which drops what could carry customer content (SQL text, query strings). Started by
// runtime/telemetry-register.ts before anything else is loaded (node --import), so the
// instrumentations see http when it is first loaded.
import type { RequestOptions } from 'node:http';
import { createRequire } from 'node:module';
import { type Context, createContextKey } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { NodeSDK, resources, tracing } from '@opentelemetry/sdk-node';
import type { HeadSampling } from '../api/middleware/server-span.ts';
import { PromiseContextManager } from './promise-context-manager.ts';

export interface Telemetry {
  /** True when spans are recorded and exported. */
  enabled: boolean;
  /** Where spans go: the Temporal workflow span sink uses the same one. */
  spanProcessor: tracing.SpanProcessor;
  resource: resources.Resource;
  /** With our default sampler and propagators: the API draws a new trace before making its span. */
  headSampling?: HeadSampling;
  shutdown(): Promise<void>;
}

/** The share of traces recorded when OTEL_TRACES_SAMPLER is unset: the common production default. */
export const DEFAULT_TRACE_RATIO = 0.1;

/** Where the API's draw for a new trace travels to the sampler (api/middleware/server-span.ts). */
const HEAD_DECISION = createContextKey('gws.head-sampling-decision');

/**
 * The root of our default sampler: a span whose context carries the API's draw follows it (the API
 * drew with the same ratio, and skips the span altogether for a read it dropped); any other new
 * trace (a workflow, a worker's call) is sampled by its trace id, as TraceIdRatioBased does. The
 * draw stays in the request's context, but only the server span is a root there: every span under it
 * has it as parent, so ParentBased decides those without asking this sampler.
 */
class HeadDecidedSampler implements tracing.Sampler {
  private readonly byTraceId = new tracing.TraceIdRatioBasedSampler(DEFAULT_TRACE_RATIO);

  shouldSample(context: Context, traceId: string): tracing.SamplingResult {
    const drawn = context.getValue(HEAD_DECISION);
    if (drawn === undefined) return this.byTraceId.shouldSample(context, traceId);
    return { decision: drawn ? tracing.SamplingDecision.RECORD_AND_SAMPLED : tracing.SamplingDecision.NOT_RECORD };
  }

  toString(): string {
    return `HeadDecided{${DEFAULT_TRACE_RATIO}}`;
  }
}

/**
 * The sampler: with OTEL_TRACES_SAMPLER set, none here (the SDK reads it and OTEL_TRACES_SAMPLER_ARG, the
 * standard way); unset, 10 % of new traces, parent-based (a request that arrives inside a sampled trace is
 * recorded, one inside an unsampled trace is not), rather than the SDK's default of every request.
 */
export function samplerFor(env: NodeJS.ProcessEnv): tracing.Sampler | undefined {
  if (env.OTEL_TRACES_SAMPLER) return undefined;
  return new tracing.ParentBasedSampler({ root: new HeadDecidedSampler() });
}

/**
 * The API's own draw for new traces: only under our default sampler and the default propagators
 * (W3C trace context and baggage), whose headers the API checks before skipping them.
 */
export function headSamplingFor(env: NodeJS.ProcessEnv): HeadSampling | undefined {
  if (env.OTEL_TRACES_SAMPLER || env.OTEL_PROPAGATORS) return undefined;
  return { ratio: DEFAULT_TRACE_RATIO, decisionKey: HEAD_DECISION };
}

/** Attributes an instrumentation may set that can carry content: dropped, or cut at the query string. */
const DROPPED = ['db.statement', 'db.query.text', 'url.query', 'url.path'];
const WITHOUT_QUERY = ['http.url', 'http.target'];
/** Outgoing URLs (webhooks, context URLs, an upstream): their path may hold a token, so only the origin stays. */
const ORIGIN_ONLY = ['url.full'];

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '';
  }
}

/** Drops the attributes that could carry content, cuts query strings off our own URLs and outgoing URLs to their origin. */
function scrub(attributes: Record<string, unknown>): void {
  for (const key of DROPPED) delete attributes[key];
  for (const key of WITHOUT_QUERY) if (typeof attributes[key] === 'string') attributes[key] = attributes[key].split('?')[0];
  for (const key of ORIGIN_ONLY) if (typeof attributes[key] === 'string') attributes[key] = originOf(attributes[key]);
}

/**
 * An error's message may quote what was sent (pg's carries the query's parameters; Temporal's
 * interceptors record activity failures): a span keeps its status code and the exception's type only.
 */
function scrubErrors(span: tracing.ReadableSpan): void {
  const writable = span as unknown as { status: { code: number; message?: string }; events: tracing.TimedEvent[] };
  if (writable.status.message !== undefined) writable.status = { code: writable.status.code };
  for (const event of writable.events) {
    const attributes = event.attributes as Record<string, unknown> | undefined;
    if (!attributes) continue;
    delete attributes['exception.message'];
    delete attributes['exception.stacktrace'];
  }
}

/**
 * Removes content-bearing attributes from each span, as it starts and again as it ends (an
 * instrumentation may set them in between, as pg's does the SQL text), and error messages from its
 * status and exception events, before any exporter sees it.
 */
export class ContentFreeProcessor implements tracing.SpanProcessor {
  constructor(private readonly next: tracing.SpanProcessor) {}

  onStart(span: tracing.Span, parent: Context): void {
    scrub(span.attributes as Record<string, unknown>);
    this.next.onStart(span, parent);
  }

  onEnd(span: tracing.ReadableSpan): void {
    scrub(span.attributes as Record<string, unknown>);
    scrubErrors(span);
    this.next.onEnd(span);
  }

  forceFlush(): Promise<void> {
    return this.next.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.next.shutdown();
  }
}

/**
 * Whether an outgoing request goes to the collector at `endpoint`: the exporter's own requests, never
 * traced. The exporter sends inside a context that suppresses tracing, but it sends a retry from a
 * timer, which our context manager does not carry a context into (runtime/promise-context-manager.ts).
 */
export function sentTo(endpoint: string): (request: RequestOptions) => boolean {
  let collector: URL;
  try {
    collector = new URL(endpoint);
  } catch {
    return () => false;
  }
  const portOf = (port: unknown, protocol: unknown) => String(port || (protocol === 'https:' ? 443 : 80));
  const collectorPort = portOf(collector.port, collector.protocol);
  return (request) => (request.hostname ?? request.host) === collector.hostname && portOf(request.port, request.protocol) === collectorPort;
}

/**
 * Makes and starts the SDK with `start`, has the HTTP instrumentation patch node:http and node:https,
 * then takes out the require hook that the instrumentations' base class installs when the first one
 * is made (require-in-the-middle, for every `require` of the process, to patch modules as they load).
 *
 * Why: under tsx, each require through that hook makes an Error and reads its stack, and with
 * source maps on, formatting a stack parses the source map of every file on it. A traced API made
 * 1,600 stack traces while loading and kept about 200 source maps, each holding an object whose
 * first key is a file URL. V8 gives each object that starts as `{}` a map reached from one shared
 * root map by a transition per first key, at most 1,536 of them, and those maps filled it. Past that,
 * objects that are new to it get a map each, which nothing can cache: `process.nextTick` then spent
 * 3 % of a traced process's time making its tick objects (docs/performance.md, row 7).
 *
 * The hook is needed for nothing else: node:http and node:https are the only modules these
 * instrumentations patch (undici is traced through diagnostics_channel), and both are loaded here.
 * ESM imports of them do not pass through require: loading each once through require, patched,
 * makes the module object that every import shares the patched one.
 */
function startedWithoutRequireHook<T>(start: () => T): T {
  const load = createRequire(import.meta.url);
  const modules = load('node:module') as { prototype: { require: unknown } };
  const builtins = process as { getBuiltinModule?: unknown };
  const plain = { require: modules.prototype.require, getBuiltinModule: builtins.getBuiltinModule };
  const started = start();
  load('node:http');
  load('node:https');
  modules.prototype.require = plain.require;
  if (plain.getBuiltinModule) builtins.getBuiltinModule = plain.getBuiltinModule;
  return started;
}

const disabled = (serviceName: string): Telemetry => ({
  enabled: false,
  spanProcessor: new tracing.NoopSpanProcessor(),
  resource: new resources.Resource({ 'service.name': serviceName }),
  shutdown: async () => {},
});

let current: Telemetry | undefined;

/** This process's telemetry: what startTelemetry started, or the disabled one. */
export function telemetry(): Telemetry {
  return current ?? disabled(process.env.OTEL_SERVICE_NAME ?? 'governed-workspace-service');
}

/** Starts tracing when the environment asks for it (once per process). */
export function startTelemetry(env: NodeJS.ProcessEnv = process.env): Telemetry {
  if (current) return current;
  const serviceName = env.OTEL_SERVICE_NAME ?? 'governed-workspace-service';
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!endpoint || env.OTEL_SDK_DISABLED === 'true') {
    current = disabled(serviceName);
    return current;
  }
  const spanProcessor = new ContentFreeProcessor(new tracing.BatchSpanProcessor(new OTLPTraceExporter()));
  const resource = new resources.Resource({ 'service.name': serviceName });
  const sampler = samplerFor(env);
  const sdk = startedWithoutRequireHook(() => {
    const started = new NodeSDK({
      resource,
      // The SDK enables only the manager it makes itself.
      contextManager: new PromiseContextManager().enable(),
      ...(sampler ? { sampler } : {}),
      spanProcessors: [spanProcessor],
      instrumentations: [
        // Outgoing calls only; bodies and headers are never recorded. Incoming requests get their
        // span from the API itself (api/middleware/server-span.ts), which skips /health and /metrics
        // before anything is made and sets attributes only on a sampled span: patching node:http
        // would cost every request a context and its listeners before the sampler decides.
        new HttpInstrumentation({ disableIncomingRequestInstrumentation: true, ignoreOutgoingRequestHook: sentTo(endpoint) }),
        new UndiciInstrumentation(),
      ],
    });
    started.start();
    return started;
  });
  current = { enabled: true, spanProcessor, resource, headSampling: headSamplingFor(env), shutdown: () => sdk.shutdown() };
  return current;
}
