// The service's own work, measured where it happens: a span after OpenTelemetry's GenAI semantic
// conventions and the Prometheus series (services/metrics.ts) for each model call (operation,
// provider, model alias, token usage) and each tool call (tool name, outcome, duration). Never a
// prompt, an answer, an argument or a result. With tracing off the tracer is OpenTelemetry's no-op
// one, and the spans cost next to nothing.
import { type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { metrics } from './metrics.ts';

const tracer = () => trace.getTracer('governed-workspace-service');

async function inSpan<T>(name: string, kind: SpanKind, attributes: Record<string, string>, work: (span: Span) => Promise<T>): Promise<T> {
  return await tracer().startActiveSpan(name, { kind, attributes }, async (span) => {
    try {
      return await work(span);
    } catch (err) {
      // The error's class only: a message may quote what was sent.
      span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).name });
      span.setAttribute('error.type', (err as Error).name);
      throw err;
    } finally {
      span.end();
    }
  });
}

const modelAttributes = (provider: string, model: string) => ({ 'gen_ai.operation.name': 'chat', 'gen_ai.system': provider, 'gen_ai.request.model': model });
const usageAttributes = (input: number, output: number) => ({ 'gen_ai.usage.input_tokens': input, 'gen_ai.usage.output_tokens': output });

function countModelCall(provider: string, model: string, outcome: 'ok' | 'error', usage?: { input: number; output: number }): void {
  metrics.modelCalls.inc({ provider, model, outcome });
  if (!usage) return;
  metrics.modelTokens.inc({ provider, model, kind: 'input' }, usage.input);
  metrics.modelTokens.inc({ provider, model, kind: 'output' }, usage.output);
}

/** A model call: `chat <alias>`, with the provider and, once known, the token usage. */
export async function modelCallSpan<T>(provider: string, model: string, work: (usage: (input: number, output: number) => void) => Promise<T>): Promise<T> {
  let reported: { input: number; output: number } | undefined;
  try {
    const result = await inSpan(`chat ${model}`, SpanKind.CLIENT, modelAttributes(provider, model), (span) =>
      work((input, output) => {
        reported = { input, output };
        span.setAttributes(usageAttributes(input, output));
      }),
    );
    countModelCall(provider, model, 'ok', reported);
    return result;
  } catch (err) {
    countModelCall(provider, model, 'error');
    throw err;
  }
}

/** A streamed model call's span, ended by the caller once the stream is done (with its usage) or failed. */
export function streamedModelSpan(provider: string, model: string) {
  const span = tracer().startSpan(`chat ${model}`, {
    kind: SpanKind.CLIENT,
    attributes: { ...modelAttributes(provider, model), 'gen_ai.request.stream': 'true' },
  });
  return {
    done(usage?: { promptTokens: number; completionTokens: number }) {
      if (usage) span.setAttributes(usageAttributes(usage.promptTokens, usage.completionTokens));
      countModelCall(provider, model, 'ok', usage && { input: usage.promptTokens, output: usage.completionTokens });
      span.end();
    },
    failed(err: unknown) {
      countModelCall(provider, model, 'error');
      span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).name });
      span.setAttribute('error.type', (err as Error).name);
      span.end();
    },
  };
}

/** A tool call: `execute_tool <tool>`, with its outcome (done, failed, outcome_unknown…; error when it threw). */
export async function toolCallSpan<T>(tool: string, work: (outcome: (status: string) => void) => Promise<T>): Promise<T> {
  const attributes = { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': tool };
  const stopTimer = metrics.toolDuration.startTimer({ tool });
  let outcome = 'error';
  try {
    return await inSpan(`execute_tool ${tool}`, SpanKind.INTERNAL, attributes, (span) =>
      work((status) => {
        outcome = status;
        span.setAttribute('gws.tool.outcome', status);
      }),
    );
  } finally {
    stopTimer();
    metrics.toolCalls.inc({ tool, outcome });
  }
}
