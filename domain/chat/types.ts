// What a chat provider receives and returns, independent of any vendor.
import type { ModelId } from '../models.ts';

/** A tool call as OpenAI's wire format carries it: `arguments` is a JSON string. */
export interface ToolCallRequest {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** A tool offered to the model, in OpenAI's `tools` wire format. */
export interface ToolDefinition {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export interface ChatMessage {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool';
  content: string;
  /** An assistant turn that called tools. */
  tool_calls?: ToolCallRequest[];
  /** A tool result answers this call. */
  tool_call_id?: string;
}

export interface ChatRequest {
  model: ModelId;
  messages: ChatMessage[];
  /** Recalled vault entries and fetched context, already bounded. */
  grounding: { memory: { id: string; subject: string; content: string }[]; document: string | null };
  responseFormat: { name: string; schema: Record<string, unknown> } | null;
  maxTokens: number;
  /** Tools the model may call (runs' agent loop). */
  tools?: ToolDefinition[];
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
  | { type: 'finish'; reason: ChatOutput['finishReason'] };

export interface ChatProvider {
  readonly id: string;
  complete(request: ChatRequest, signal: AbortSignal): Promise<ChatOutput>;
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
