// The public API, as the page calls it: same origin, a Bearer header, no cookies (so no CSRF surface),
// nothing cached. Errors are the contract's error object, kept as ApiError values.
import { createParser } from 'eventsource-parser';
import type { ApiErrorBody, Approver, Effect, Run, RunEvent } from './types.ts';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly param: string | null = null,
    readonly retryAfterS: number | null = null,
  ) {
    super(message);
  }
}

export interface Decision {
  decision: 'approve' | 'reject';
  reason?: string;
  digests: string[];
  edits?: { step_id: string; arguments: Record<string, unknown> }[];
}

/** A random Idempotency-Key; getRandomValues works on plain http too, where randomUUID does not. */
export function newIdempotencyKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `inbox-${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    const abort = () => {
      clearTimeout(timer);
      resolve();
    };
    signal?.addEventListener('abort', abort, { once: true });
  });

export function apiClient(key: string) {
  const auth = { Authorization: `Bearer ${key}` };

  async function call<T>(method: 'GET' | 'POST', path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
    const response = await fetch(path, {
      method,
      headers: { ...auth, Accept: 'application/json', ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      cache: 'no-store',
      credentials: 'omit',
    });
    const text = await response.text();
    const json = text ? (JSON.parse(text) as unknown) : null;
    if (!response.ok) {
      const error = (json as ApiErrorBody | null)?.error;
      const retry = Number(response.headers.get('Retry-After'));
      throw new ApiError(
        response.status,
        error?.code ?? `http_${response.status}`,
        error?.message ?? response.statusText,
        error?.param ?? null,
        retry > 0 ? retry : null,
      );
    }
    return json as T;
  }

  return {
    /** The approver this key is (GET /v1/approvers/me): a core key answers 401, and never signs in. */
    me: () => call<Approver>('GET', '/v1/approvers/me'),
    waitingRuns: () => call<{ data: Run[] }>('GET', '/v1/agent-runs?status=awaiting_approval&limit=100').then((page) => page.data),
    run: (runId: string) => call<Run>('GET', `/v1/agent-runs/${encodeURIComponent(runId)}`),
    preview: (runId: string, edits: { step_id: string; arguments: Record<string, unknown> }[]) =>
      call<{ effects: Effect[] }>('POST', `/v1/agent-runs/${encodeURIComponent(runId)}/approval/preview`, { edits }).then((p) => p.effects),

    /** Sends a decision; a 503 (nothing confirmed) is retried with the same Idempotency-Key, so it applies once. */
    async decide(runId: string, decision: Decision): Promise<Run> {
      const idempotencyKey = newIdempotencyKey();
      for (let attempt = 1; ; attempt++) {
        try {
          return await call<Run>('POST', `/v1/agent-runs/${encodeURIComponent(runId)}/approval`, decision, { 'Idempotency-Key': idempotencyKey });
        } catch (err) {
          if (!(err instanceof ApiError) || err.status !== 503 || attempt >= 4) throw err;
          await sleep((err.retryAfterS ?? 1) * 1_000);
        }
      }
    },

    /**
     * Follows every state change of the tenant's runs (GET /v1/agent-runs/events) until `signal` aborts,
     * reconnecting after a second. `onReady` runs each time the stream listens: list then.
     */
    async follow(
      handlers: { onReady(): void; onEvent(e: RunEvent): void; onStatus(s: 'live' | 'reconnecting'): void; onSignedOut(): void },
      signal: AbortSignal,
    ) {
      let lastId: string | undefined;
      while (!signal.aborted) {
        let wait = 1_000;
        try {
          const response = await fetch('/v1/agent-runs/events', {
            headers: { ...auth, Accept: 'text/event-stream', ...(lastId ? { 'Last-Event-ID': lastId } : {}) },
            cache: 'no-store',
            credentials: 'omit',
            signal,
          });
          if (response.status === 401) return handlers.onSignedOut();
          if (!response.ok || !response.body) {
            wait = Math.max(wait, Number(response.headers.get('Retry-After')) * 1_000 || 0);
            throw new Error(`stream answered ${response.status}`);
          }
          const parser = createParser({
            onEvent(message) {
              if (message.event === 'ready') {
                handlers.onStatus('live');
                handlers.onReady();
              } else if (message.event === 'reset') handlers.onReady();
              else {
                if (message.id) lastId = message.id;
                handlers.onEvent(JSON.parse(message.data) as RunEvent);
              }
            },
          });
          const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            parser.feed(value);
          }
        } catch {
          // Gone or refused: reconnect below, resuming after the last event seen.
        }
        if (signal.aborted) return;
        handlers.onStatus('reconnecting');
        await sleep(wait, signal);
      }
    },
  };
}

export type Api = ReturnType<typeof apiClient>;
