// What a chat provider receives and returns, independent of any vendor.
import type { ModelId } from '../models.ts';

/** A tool call as OpenAI's wire format carries it: `arguments` is a JSON string. */
export interface ToolCallRequest {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** A tool offered to the model, in OpenAI's `tools` wire format (passed to an upstream unchanged). */
export interface ToolDefinition {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean };
}

/** OpenAI's `tool_choice`: whether the model may, must or must not call a tool, or which one it must call. */
export type ToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } };

/**
 * One element of a streamed `delta.tool_calls`, as OpenAI streams it: the first delta of a call
 * carries its `id`, `type` and `function.name`, later ones fragments of `function.arguments`.
 */
export interface ToolCallDelta {
  index: number;
  id?: string;
  type?: 'function';
  function?: { name?: string; arguments?: string };
}

export interface ChatMessage {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool';
  content: string;
  /** An assistant turn that called tools. */
  tool_calls?: ToolCallRequest[];
  /** A tool result answers this call. */
  tool_call_id?: string;
}

/**
 * What response_format asks for: an answer that validates against a JSON Schema
 * of the supported subset (`kind` may be left out; `description` and `strict`
 * are the client's, passed to an upstream), or any JSON object.
 */
export type ResponseFormat =
  | { kind?: 'json_schema'; name: string; schema: Record<string, unknown>; description?: string; strict?: boolean }
  | { kind: 'json_object' };

/**
 * OpenAI's sampling parameters, validated to OpenAI's bounds by the contract and forwarded to an
 * upstream as they came. The local provider is deterministic and reads none of them.
 */
export interface Sampling {
  temperature?: number;
  top_p?: number;
  seed?: number;
  stop?: string | string[];
  presence_penalty?: number;
  frequency_penalty?: number;
  /** The end user's id, for the upstream's abuse monitoring; never logged. */
  user?: string;
}

export interface ChatRequest {
  model: ModelId;
  messages: ChatMessage[];
  /** Recalled vault entries and fetched context, already bounded. */
  grounding: { memory: { id: string; subject: string; content: string }[]; document: string | null };
  responseFormat: ResponseFormat | null;
  maxTokens: number;
  /** Tools the model may call (runs' agent loop, chat's `tools`); only a provider with `callsTools` receives them. */
  tools?: ToolDefinition[];
  /** Chat's `tool_choice` and `parallel_tool_calls`, sent only with `tools`. */
  toolChoice?: ToolChoice;
  parallelToolCalls?: boolean;
  /** Chat's sampling parameters, forwarded to an upstream. */
  sampling?: Sampling;
}

/** A choice among fixed answers, by likelihood. */
export interface RankRequest {
  messages: ChatMessage[];
  candidates: string[];
  /** The start of the model's reply, which every candidate continues. */
  prefix?: string;
}

export interface RankOutput {
  /** Log-likelihood of each candidate, in order. */
  scores: number[];
  usage: ReportedUsage;
}

/** Token usage as the provider reported it. */
export interface ReportedUsage {
  promptTokens: number;
  completionTokens: number;
}

export interface ChatOutput {
  content: string | null;
  refusal: string | null;
  finishReason: 'stop' | 'length' | 'content_filter' | 'tool_calls';
  toolCalls?: ToolCallRequest[];
  /** Present when the provider reports usage; charges then follow it rather than the byte-count estimate. */
  usage?: ReportedUsage;
}

/** One piece of a streamed answer. */
export type ChatStreamEvent =
  | { type: 'content'; text: string }
  | { type: 'refusal'; text: string }
  /** The `delta.tool_calls` of one streamed chunk. */
  | { type: 'tool_calls'; deltas: ToolCallDelta[] }
  | { type: 'finish'; reason: ChatOutput['finishReason'] }
  /** The usage the provider reported for the whole answer (the last chunk, when asked with include_usage). */
  | { type: 'usage'; usage: ReportedUsage };

export interface ChatProvider {
  readonly id: string;
  /** True when the provider can answer with tool calls; one that cannot is never sent tools. */
  readonly callsTools?: boolean;
  /**
   * True when the provider builds a structured answer only from values the request's text states
   * (local); a model's answer is held to that text by the chat layer (domain/chat/grounded-values.ts).
   */
  readonly groundsValues?: boolean;
  /** The provider's own model behind an alias (an upstream's mapped name, the embedded model's file); none for a provider without a model. */
  modelFor?(alias: ModelId): string;
  complete(request: ChatRequest, signal: AbortSignal): Promise<ChatOutput>;
  /**
   * Scores each candidate answer by the model's own likelihood after `request.messages` (a local
   * model can; an HTTP upstream cannot). Usage counts every token the model evaluated.
   */
  rank?(request: RankRequest, signal: AbortSignal): Promise<RankOutput>;
  /** Token by token, when the provider can; otherwise callers chunk `complete`. */
  stream?(request: ChatRequest, signal: AbortSignal): AsyncIterable<ChatStreamEvent>;
}

/** A provider failure, stripped of provider identity before it reaches a client. */
export class ProviderError extends Error {
  constructor(
    readonly kind: 'rate_limited' | 'unavailable',
    readonly retryAfterSeconds?: number,
  ) {
    super(`provider ${kind}`);
    this.name = 'ProviderError';
  }
}
