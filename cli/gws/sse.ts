// Server-sent events over fetch, parsed with eventsource-parser: one response read to its end, and a
// follower that reconnects with Last-Event-ID when a stream drops before the caller is done.
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { apiErrorOfResponse, CliError } from './errors.ts';

export type SseMessage = EventSourceMessage;

/** What the handler of a message answers: 'stop' ends the stream (the caller has what it needed). */
// biome-ignore lint/suspicious/noConfusingVoidType: a handler that returns nothing goes on; only 'stop' ends the stream.
export type SseHandler = (message: SseMessage) => Promise<'stop' | void> | 'stop' | void;

export interface ReadOptions {
  /** Give up on a stream that sends nothing, not even a keep-alive comment, for this long. */
  idleMs?: number;
  /** The server's `retry:` field, when it sends one. */
  onRetry?: (ms: number) => void;
}

/**
 * Reads an event-stream response, handing each message to `onMessage` in order (awaiting each).
 * Answers how it ended: 'stopped' (the handler said so), 'ended' (the server closed the stream) or
 * 'idle' (nothing arrived for idleMs). A broken connection rejects.
 */
export async function readSse(response: Response, onMessage: SseHandler, options: ReadOptions = {}): Promise<'stopped' | 'ended' | 'idle'> {
  if (!response.body) return 'ended';
  const pending: SseMessage[] = [];
  const parser = createParser({ onEvent: (m) => pending.push(m), onRetry: (ms) => options.onRetry?.(ms) });
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let idle = false;
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    if (!options.idleMs) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      idle = true;
      void reader.cancel().catch(() => {});
    }, options.idleMs);
  };
  try {
    arm();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return idle ? 'idle' : 'ended';
      arm();
      parser.feed(decoder.decode(value, { stream: true }));
      while (pending.length > 0) {
        if ((await onMessage(pending.shift()!)) === 'stop') {
          await reader.cancel().catch(() => {});
          return 'stopped';
        }
      }
    }
  } finally {
    clearTimeout(timer);
  }
}

export interface FollowOptions {
  /** Opens the stream; `lastEventId` is the id of the last message handled, for Last-Event-ID. */
  open(lastEventId: string | undefined): Promise<Response>;
  onMessage: SseHandler;
  /** Told before each reconnection (attempt counts from 1 since the last message). */
  onReconnect?: (attempt: number, delayMs: number, why: string) => void;
  idleMs?: number;
  /** Consecutive attempts without a message before giving up. */
  maxAttempts?: number;
  /** First reconnection delay; doubles per attempt up to maxDelayMs. The server's `retry:` replaces it. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  sleep?: (ms: number) => Promise<void>;
  /** Stops following (Ctrl+C): rejects with the signal's reason. */
  signal?: AbortSignal;
}

const RETRYABLE = new Set([408, 429, 500, 502, 503, 504]);

/**
 * Follows an event stream until the handler stops it, or the server answers 204 (nothing follows). A stream that ends, goes idle or breaks before
 * that is reopened with the id of the last message handled (Last-Event-ID), after a growing delay (or
 * the server's Retry-After / `retry:`). A non-retryable error answer (401, 404, …) rejects with an
 * ApiError; so does giving up after maxAttempts consecutive failures.
 */
export async function followSse(options: FollowOptions): Promise<void> {
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const maxAttempts = options.maxAttempts ?? 12;
  let baseDelay = options.baseDelayMs ?? 500;
  const maxDelay = options.maxDelayMs ?? 5_000;
  let lastEventId: string | undefined;
  let attempt = 0;
  for (;;) {
    let why: string;
    let retryAfterMs: number | undefined;
    try {
      const response = await options.open(lastEventId);
      // 204: nothing follows (EventSource stops reconnecting on it too).
      if (response.status === 204) return;
      if (!response.ok) {
        if (!RETRYABLE.has(response.status)) throw await apiErrorOfResponse(response);
        const retryAfter = Number(response.headers.get('retry-after'));
        if (Number.isFinite(retryAfter) && retryAfter > 0) retryAfterMs = retryAfter * 1_000;
        why = `HTTP ${response.status}`;
        await response.body?.cancel().catch(() => {});
      } else {
        const outcome = await readSse(
          response,
          async (message) => {
            attempt = 0; // progress: the next drop starts the backoff afresh
            if (message.id) lastEventId = message.id;
            return options.onMessage(message);
          },
          { idleMs: options.idleMs, onRetry: (ms) => (baseDelay = ms) },
        );
        if (outcome === 'stopped') return;
        why = outcome === 'idle' ? 'the stream went quiet' : 'the stream ended';
      }
    } catch (err) {
      if (options.signal?.aborted) throw options.signal.reason;
      if (err instanceof CliError) throw err;
      why = err instanceof Error ? ((err.cause as Error | undefined)?.message ?? err.message) : String(err);
    }
    attempt += 1;
    if (attempt > maxAttempts) throw new CliError(`lost the event stream (${why}) and could not reconnect after ${maxAttempts} attempts`);
    const delay = retryAfterMs ?? Math.min(maxDelay, baseDelay * 2 ** (attempt - 1));
    options.onReconnect?.(attempt, delay, why);
    await sleep(delay);
    if (options.signal?.aborted) throw options.signal.reason;
  }
}
