// An OpenAI-compatible upstream, configured by environment: base URL, the name
// of the variable holding its key (a reference, never the value in config),
// and a model mapping. Its failures become ProviderErrors with no identity.
// Tools, tool_choice and parallel_tool_calls go to it as OpenAI's wire format;
// its tool calls (whole, or streamed as deltas) come back in the same shape.
// Tool arguments are never logged.
import { EventSourceParserStream } from 'eventsource-parser/stream';
import {
  type ChatMessage,
  type ChatOutput,
  type ChatProvider,
  type ChatRequest,
  type ChatStreamEvent,
  ProviderError,
  type ReportedUsage,
  type ToolCallDelta,
  type ToolCallRequest,
} from '../../../domain/chat/types.ts';
import { groundingPrompt } from '../grounding-prompt.ts';
import { wireResponseFormat } from '../structured-output.ts';

export interface UpstreamConfig {
  baseUrl: string;
  apiKeyEnv?: string;
  modelMap: Record<string, string>;
  timeoutMs: number;
}

interface UpstreamReply {
  choices?: { message?: { content?: string | null; refusal?: string | null; tool_calls?: ToolCallRequest[] }; finish_reason?: string }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number };
}

interface UpstreamChunk {
  choices?: { delta?: { content?: string | null; refusal?: string | null; tool_calls?: unknown }; finish_reason?: string | null }[];
  /** The last chunk's, when the request asked for it (stream_options.include_usage). */
  usage?: UpstreamReply['usage'] | null;
}

function finishOf(reason: string | null | undefined): ChatOutput['finishReason'] {
  return reason === 'length' || reason === 'content_filter' || reason === 'tool_calls' ? reason : 'stop';
}

/**
 * An answer that called tools finishes tool_calls even when the server said stop (some do);
 * length and content_filter stay, so a call cut short is never passed off as a whole one.
 */
function finishWithCalls(reason: string | null | undefined, called: boolean): ChatOutput['finishReason'] {
  const finish = finishOf(reason);
  return called && finish === 'stop' ? 'tool_calls' : finish;
}

function usageOf(reply: { usage?: UpstreamReply['usage'] | null }): ReportedUsage | undefined {
  const u = reply.usage;
  if (!u || !Number.isInteger(u.prompt_tokens) || !Number.isInteger(u.completion_tokens)) return undefined;
  return { promptTokens: Math.max(0, u.prompt_tokens!), completionTokens: Math.max(0, u.completion_tokens!) };
}

function toolCallsOf(calls: unknown): ToolCallRequest[] | undefined {
  if (!Array.isArray(calls) || calls.length === 0) return undefined;
  return calls
    .filter((c) => c && typeof c.id === 'string' && typeof c.function?.name === 'string')
    .map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.function.name, arguments: argumentsOf(c.function.arguments) } }));
}

/** OpenAI sends arguments as a JSON string; a server that sends the object gets it serialized, one that sends none `{}`. */
function argumentsOf(args: unknown): string {
  if (typeof args === 'string') return args;
  return args === undefined || args === null ? '{}' : JSON.stringify(args);
}

/**
 * A chunk's `delta.tool_calls`, in OpenAI's shape. Servers that leave out `index` (one whole call
 * per chunk) get one by call id, and the first delta of a call is marked `type: "function"` when
 * the server left that out, so the official clients' stream helpers can reassemble every call.
 */
function toolCallDeltas(raw: unknown, byId: Map<string, number>, last: { index: number }): ToolCallDelta[] {
  if (!Array.isArray(raw)) return [];
  const deltas: ToolCallDelta[] = [];
  for (const d of raw as { index?: unknown; id?: unknown; type?: unknown; function?: { name?: unknown; arguments?: unknown } }[]) {
    if (!d || typeof d !== 'object') continue;
    const id = typeof d.id === 'string' && d.id ? d.id : undefined;
    let index: number;
    if (typeof d.index === 'number' && Number.isInteger(d.index) && d.index >= 0) index = d.index;
    else if (id !== undefined) index = byId.get(id) ?? byId.size;
    else if (last.index >= 0) index = last.index;
    else continue;
    const first = id !== undefined && !byId.has(id);
    if (id !== undefined) byId.set(id, index);
    last.index = index;
    const delta: ToolCallDelta = { index };
    if (id !== undefined) delta.id = id;
    if (d.type === 'function' || first) delta.type = 'function';
    const fn = d.function;
    if (fn && typeof fn === 'object') {
      delta.function = {};
      if (typeof fn.name === 'string') delta.function.name = fn.name;
      if (fn.arguments !== undefined && fn.arguments !== null) delta.function.arguments = argumentsOf(fn.arguments);
    }
    deltas.push(delta);
  }
  return deltas;
}

/** OpenAI's wire form of a message: an assistant turn that only called tools has null content. */
function wireMessage(m: ChatMessage) {
  if (m.role === 'assistant' && m.tool_calls?.length) return { role: m.role, content: m.content || null, tool_calls: m.tool_calls };
  if (m.role === 'tool') return { role: m.role, content: m.content, tool_call_id: m.tool_call_id };
  return { role: m.role, content: m.content };
}

/** POSTs the request upstream; transport and HTTP failures become ProviderErrors without identity. */
async function post(config: UpstreamConfig, request: ChatRequest, signal: AbortSignal, stream: boolean): Promise<Response> {
  const key = config.apiKeyEnv ? process.env[config.apiKeyEnv] : undefined;
  let res: Response;
  try {
    res = await fetch(`${config.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
      body: JSON.stringify({
        model: config.modelMap[request.model] ?? request.model,
        messages: [
          ...(request.grounding.memory.length || request.grounding.document ? [{ role: 'system', content: groundingPrompt(request.grounding) }] : []),
          ...request.messages.map(wireMessage),
        ],
        max_tokens: request.maxTokens,
        ...request.sampling,
        stream,
        // Without it a stream carries no usage, and the answer could only be billed by an estimate.
        ...(stream ? { stream_options: { include_usage: true } } : {}),
        ...(request.tools?.length
          ? {
              tools: request.tools,
              ...(request.toolChoice !== undefined ? { tool_choice: request.toolChoice } : {}),
              ...(request.parallelToolCalls !== undefined ? { parallel_tool_calls: request.parallelToolCalls } : {}),
            }
          : {}),
        ...(request.responseFormat ? { response_format: wireResponseFormat(request.responseFormat) } : {}),
      }),
      signal: AbortSignal.any([signal, AbortSignal.timeout(config.timeoutMs)]),
    });
  } catch (err) {
    if (signal.aborted) throw err;
    throw new ProviderError('unavailable');
  }
  if (res.status === 429) {
    const retry = Number(res.headers.get('retry-after'));
    throw new ProviderError('rate_limited', Number.isFinite(retry) && retry > 0 ? Math.ceil(retry) : 1);
  }
  if (!res.ok) throw new ProviderError('unavailable');
  return res;
}

export function upstreamProvider(config: UpstreamConfig): ChatProvider {
  return {
    id: 'upstream',
    callsTools: true,
    modelFor: (alias) => config.modelMap[alias] ?? alias,
    async complete(request, signal) {
      const res = await post(config, request, signal, false);
      let reply: UpstreamReply;
      try {
        reply = (await res.json()) as UpstreamReply;
      } catch {
        throw new ProviderError('unavailable');
      }
      const choice = reply.choices?.[0];
      if (!choice?.message) throw new ProviderError('unavailable');
      const toolCalls = toolCallsOf(choice.message.tool_calls);
      return {
        content: choice.message.content ?? null,
        refusal: choice.message.refusal ?? null,
        finishReason: finishWithCalls(choice.finish_reason, toolCalls !== undefined),
        ...(toolCalls ? { toolCalls } : {}),
        ...(usageOf(reply) ? { usage: usageOf(reply) } : {}),
      };
    },

    async *stream(request, signal): AsyncIterable<ChatStreamEvent> {
      const res = await post(config, request, signal, true);
      if (!res.body) throw new ProviderError('unavailable');
      const events = res.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
      let finished = false;
      const byId = new Map<string, number>();
      const last = { index: -1 };
      // Read to [DONE] (or the end), past finish_reason: the usage chunk comes after it.
      for await (const event of events) {
        if (event.data === '[DONE]') break;
        let chunk: UpstreamChunk;
        try {
          chunk = JSON.parse(event.data) as UpstreamChunk;
        } catch {
          throw new ProviderError('unavailable');
        }
        const usage = usageOf(chunk);
        if (usage) yield { type: 'usage', usage };
        const choice = chunk.choices?.[0];
        if (choice?.delta?.content) yield { type: 'content', text: choice.delta.content };
        if (choice?.delta?.refusal) yield { type: 'refusal', text: choice.delta.refusal };
        const deltas = toolCallDeltas(choice?.delta?.tool_calls, byId, last);
        if (deltas.length) yield { type: 'tool_calls', deltas };
        if (choice?.finish_reason) {
          finished = true;
          yield { type: 'finish', reason: finishWithCalls(choice.finish_reason, last.index >= 0) };
        }
      }
      if (!finished) {
        if (signal.aborted) throw signal.reason;
        throw new ProviderError('unavailable');
      }
    },
  };
}
