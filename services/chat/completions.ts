// One chat completion: validate the model, apply the refusal policy, ground
// the request (vault recall, context_url), reserve the byte-count estimate,
// call the routed provider, enforce structured output, settle actual usage,
// record a content-free journey event, and remember the exchange when asked.
import { randomBytes } from 'node:crypto';
import type { Db } from '../../db/client.ts';
import { groundingSourceOf } from '../../domain/chat/grounded-values.ts';
import { isDeclined, POLICY_REFUSAL } from '../../domain/chat/policy.ts';
import {
  type ChatMessage,
  type ChatOutput,
  type ChatProvider,
  type ChatRequest,
  ProviderError,
  type ReportedUsage,
  type Sampling,
  type ToolCallDelta,
  type ToolCallRequest,
  type ToolChoice,
  type ToolDefinition,
} from '../../domain/chat/types.ts';
import { errors } from '../../domain/errors.ts';
import { admitModel, type ModelId } from '../../domain/models.ts';
import { modelCredits, type PricingTable, type Provider } from '../../domain/pricing.ts';
import { estimateTokens } from '../../domain/tokens.ts';
import { toStorable } from '../../domain/storable-text.ts';
import { truncate } from '../../domain/text/analyze.ts';
import { recordJourneyEvent } from '../journey.ts';
import { release, reserve, settle, type UsageBasis } from '../ledger.ts';
import { recallMemory } from '../memory.ts';
import { type Providers, routeOf } from '../model-layer.ts';
import { modelCallSpan, streamedModelSpan } from '../instrumentation.ts';
import { createEntry } from '../vault/entries.ts';
import { type ContextUrlPolicy, fetchContext } from './context-url.ts';
import { enforceResponseFormat } from './structured-output.ts';

export interface ChatDeps {
  db: Db;
  /** This API process's instance id: chat holds name it, so the hold sweeper can release them if the process dies. */
  owner?: string;
  pricing: PricingTable;
  providers: Providers;
  /** The provider for a model alias the tenant has no routing policy for. */
  defaultProvider: Provider;
  maxTokensDefault: number;
  refusalTerms: string[];
  contextUrl: ContextUrlPolicy;
}

export interface MemoryOptions {
  recall: boolean;
  remember: boolean;
  limit: number;
  subject?: string;
  expiresAt?: Date;
}

export interface ChatInput {
  tenantId: string;
  model: string;
  messages: ChatMessage[];
  contextUrl?: string;
  memory: MemoryOptions | null;
  responseFormat: ChatRequest['responseFormat'];
  maxTokens?: number;
  /** OpenAI's tools (non-empty when present), tool_choice and parallel_tool_calls. */
  tools?: ToolDefinition[];
  toolChoice?: ToolChoice;
  parallelToolCalls?: boolean;
  /** OpenAI's sampling parameters, forwarded to an upstream; the local provider reads none. */
  sampling?: Sampling;
}

export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export type ChatDelta =
  | { kind: 'content' | 'refusal'; text: string }
  /** One chunk's `delta.tool_calls`. */
  | { kind: 'tool_calls'; toolCalls: ToolCallDelta[] }
  | { kind: 'done'; finishReason: ChatOutput['finishReason']; usage: ChatUsage };

export interface PreparedChat {
  id: string;
  created: number;
  model: ModelId;
  /** Runs the provider; on abort or failure the hold is released. */
  finish(signal: AbortSignal): Promise<{ output: ChatOutput; usage: ChatUsage }>;
  /** The same, piece by piece: token by token from a streaming provider, else the finished answer in small deltas. */
  stream(signal: AbortSignal): AsyncIterable<ChatDelta>;
}

/** Splits text into small deltas (about three words each), keeping every character. */
export function deltasOf(text: string): string[] {
  const words = text.match(/\s*\S+\s*/g) ?? (text ? [text] : []);
  const deltas: string[] = [];
  for (let i = 0; i < words.length; i += 3) deltas.push(words.slice(i, i + 3).join(''));
  return deltas;
}

/** A finished answer's tool calls as OpenAI streams them: per call a delta with id, type and name, then one with the arguments. */
export function toolCallDeltasOf(calls: ToolCallRequest[]): ToolCallDelta[][] {
  return calls.flatMap((c, index) => [
    [{ index, id: c.id, type: 'function' as const, function: { name: c.function.name, arguments: '' } }],
    ...(c.function.arguments ? [[{ index, function: { arguments: c.function.arguments } }]] : []),
  ]);
}

/** Folds streamed tool-call deltas into whole calls, by index. */
function accumulateToolCalls(calls: ToolCallRequest[], deltas: ToolCallDelta[]): void {
  for (const d of deltas) {
    calls[d.index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } };
    const call = calls[d.index]!;
    if (d.id) call.id = d.id;
    if (d.function?.name) call.function.name = d.function.name;
    if (d.function?.arguments) call.function.arguments += d.function.arguments;
  }
}

const callText = (calls: ToolCallRequest[] = []) => calls.map((c) => `${c.function.name} ${c.function.arguments}`).join('\n');

const HOLD_STEP = 'chat';

async function journey(db: Db, tenantId: string, id: string, kind: string, state: string): Promise<void> {
  await recordJourneyEvent(db, { tenantId, runId: id, kind, state, eventKey: `${id}:${kind}` });
}

/** Everything that can fail with a 4xx happens here, before any response byte is sent. */
export async function prepareChat(deps: ChatDeps, input: ChatInput, signal: AbortSignal): Promise<PreparedChat> {
  const model = admitModel(input.model);
  const id = `chatcmpl-${randomBytes(12).toString('hex')}`;
  const created = Math.floor(Date.now() / 1000);
  const declined = isDeclined(input.messages, deps.refusalTerms);
  const lastUser = [...input.messages].reverse().find((m) => m.role === 'user')?.content ?? '';

  const memory =
    !declined && input.memory?.recall
      ? await recallMemory(deps.db, input.tenantId, [input.memory.subject, lastUser].filter(Boolean).join(' '), input.memory.limit)
      : [];
  const document = !declined && input.contextUrl ? await fetchContext(input.contextUrl, deps.contextUrl, signal) : null;
  const request: ChatRequest = {
    model,
    messages: input.messages,
    grounding: { memory: memory.map((m) => ({ id: m.id, subject: m.subject, content: m.content })), document },
    responseFormat: input.responseFormat,
    maxTokens: input.maxTokens ?? deps.maxTokensDefault,
    ...(input.sampling && Object.keys(input.sampling).length ? { sampling: input.sampling } : {}),
    ...(input.tools?.length ? { tools: input.tools, toolChoice: input.toolChoice, parallelToolCalls: input.parallelToolCalls } : {}),
  };
  // Routed first: a model whose policy names an unconfigured provider is a 409, and tools for a
  // provider that cannot call them a 400, before anything is held.
  const route = declined ? null : await routeOf(deps.db, input.tenantId, model, deps);
  if (route && request.tools && !deps.providers[route]?.callsTools) {
    if (request.toolChoice !== 'none') throw errors.toolsNotSupported(model);
    // tool_choice "none": a text answer, and the tools are neither sent nor counted.
    delete request.tools;
    delete request.toolChoice;
    delete request.parallelToolCalls;
  }
  const promptText = [
    ...input.messages.map((m) => m.content),
    callText(input.messages.flatMap((m) => m.tool_calls ?? [])),
    request.tools ? JSON.stringify(request.tools) : '',
    ...memory.map((m) => `${m.subject} ${m.content}`),
    document ?? '',
  ]
    .filter(Boolean)
    .join('\n');
  const promptTokens = estimateTokens(
    promptText + (input.responseFormat && 'schema' in input.responseFormat ? JSON.stringify(input.responseFormat.schema) : ''),
  );

  let provider: ChatProvider | undefined;
  if (route) {
    const hold = await reserve(deps.db, {
      tenantId: input.tenantId,
      runId: id,
      step: HOLD_STEP,
      amount: modelCredits(promptTokens + request.maxTokens, model, deps.pricing),
      budgetScope: 'chat',
      owner: deps.owner,
    });
    if (hold.status === 'insufficient') throw errors.insufficientCredits();
    if (hold.status === 'over_budget') throw errors.budgetExceeded();
    provider = deps.providers[route];
  }

  /**
   * Charges the answer; if that fails, the hold is released rather than left open (and if the
   * release fails too, the database is down: the hold sweeper releases it once it is back).
   */
  async function settleOrRelease(actualAmount: number, usageBasis: UsageBasis): Promise<void> {
    try {
      await settle(deps.db, { tenantId: input.tenantId, runId: id, step: HOLD_STEP, actualAmount, usageBasis });
    } catch (err) {
      await release(deps.db, { runId: id, step: HOLD_STEP }).catch(() => {});
      throw err;
    }
  }

  /** After an answer: settle actual usage, record the event, remember when asked. */
  async function conclude(output: ChatOutput): Promise<ChatUsage> {
    // Reported usage when the provider gives it (an upstream), else the byte-count estimate, and the charge says which.
    const completionTokens = output.usage?.completionTokens ?? estimateTokens((output.content ?? output.refusal ?? '') + callText(output.toolCalls));
    const prompt = output.usage?.promptTokens ?? promptTokens;
    if (provider) await settleOrRelease(modelCredits(prompt + completionTokens, model, deps.pricing), output.usage ? 'reported' : 'estimated');
    await journey(deps.db, input.tenantId, id, output.refusal ? 'chat.refused' : 'chat.completed', output.finishReason);
    if (input.memory?.remember && output.content) {
      await createEntry(deps.db, input.tenantId, {
        subject: input.memory.subject ?? truncate(lastUser, 120),
        // The answer is not customer input the contract checked: make it storable rather than fail the write.
        content: toStorable(`User: ${lastUser}\nAssistant: ${output.content}`),
        tags: ['chat'],
        source: `chat:${id}`,
        expiresAt: input.memory.expiresAt ?? null,
        entryKey: `chat:${id}`,
      });
    }
    return { prompt_tokens: prompt, completion_tokens: completionTokens, total_tokens: prompt + completionTokens };
  }

  /** After a failure or abort: release the hold, record it, and hide the provider behind a contract error. */
  async function fail(err: unknown, signal: AbortSignal): Promise<never> {
    await release(deps.db, { runId: id, step: HOLD_STEP });
    await journey(deps.db, input.tenantId, id, signal.aborted ? 'chat.aborted' : 'chat.failed', 'failed');
    if (err instanceof ProviderError) throw err.kind === 'rate_limited' ? errors.providerRateLimited(err.retryAfterSeconds ?? 1) : errors.providerUnavailable();
    throw err;
  }

  async function finish(signal: AbortSignal) {
    if (!provider) {
      const output: ChatOutput = { content: null, refusal: POLICY_REFUSAL, finishReason: 'content_filter' };
      return { output, usage: await conclude(output) };
    }
    let output: ChatOutput;
    try {
      output = await modelCallSpan(route!, model, async (usage) => {
        const answered = await provider!.complete(request, signal);
        if (answered.usage) usage(answered.usage.promptTokens, answered.usage.completionTokens);
        return answered;
      });
      // Tool calls are not the structured answer: the schema applies to the text answer that follows them.
      // A model's answer is also held to the request's text: it may state no value the text does not.
      if (request.responseFormat && !output.toolCalls?.length)
        output = enforceResponseFormat(request.responseFormat, output, provider.groundsValues ? undefined : groundingSourceOf(request));
    } catch (err) {
      return fail(err, signal);
    }
    return { output, usage: await conclude(output) };
  }

  async function* stream(signal: AbortSignal): AsyncIterable<ChatDelta> {
    // Structured output is validated whole before any of it is sent, so it is not streamed token by token.
    if (!provider?.stream || request.responseFormat) {
      const { output, usage } = await finish(signal);
      if (output.refusal) yield { kind: 'refusal', text: output.refusal };
      else for (const text of deltasOf(output.content ?? '')) yield { kind: 'content', text };
      for (const toolCalls of toolCallDeltasOf(output.toolCalls ?? [])) yield { kind: 'tool_calls', toolCalls };
      yield { kind: 'done', finishReason: output.finishReason, usage };
      return;
    }
    let content = '';
    let refusal = '';
    let finishReason: ChatOutput['finishReason'] = 'stop';
    let reported: ReportedUsage | undefined;
    const toolCalls: ToolCallRequest[] = [];
    const span = streamedModelSpan(route!, model);
    try {
      for await (const event of provider.stream(request, signal)) {
        if (event.type === 'finish') {
          finishReason = event.reason;
        } else if (event.type === 'usage') {
          reported = event.usage;
        } else if (event.type === 'tool_calls') {
          accumulateToolCalls(toolCalls, event.deltas);
          yield { kind: 'tool_calls', toolCalls: event.deltas };
        } else {
          if (event.type === 'content') content += event.text;
          else refusal += event.text;
          yield { kind: event.type, text: event.text };
        }
      }
    } catch (err) {
      span.failed(err);
      await fail(err, signal);
    }
    span.done(reported);
    const called = toolCalls.filter(Boolean);
    const usage = await conclude({
      content: content || null,
      refusal: refusal || null,
      finishReason,
      ...(called.length ? { toolCalls: called } : {}),
      ...(reported ? { usage: reported } : {}),
    });
    yield { kind: 'done', finishReason, usage };
  }

  return { id, created, model, finish, stream };
}
