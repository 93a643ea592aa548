// What a chat provider receives and returns, independent of any vendor.
import type { ModelId } from '../models.ts';

export interface ChatMessage {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool';
  content: string;
}

export interface ChatRequest {
  model: ModelId;
  messages: ChatMessage[];
  /** Recalled vault entries and fetched context, already bounded. */
  grounding: { memory: { id: string; subject: string; content: string }[]; document: string | null };
  responseFormat: { name: string; schema: Record<string, unknown> } | null;
  maxTokens: number;
}

export interface ChatOutput {
  content: string | null;
  refusal: string | null;
  finishReason: 'stop' | 'length' | 'content_filter';
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
