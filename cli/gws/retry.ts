// Retrying what is safe to retry: a request the server answered 503 (a dependency is down) or 429
// rate_limit_exceeded, with a Retry-After, when repeating it cannot do the work twice (reads, and writes
// that carry an Idempotency-Key). A few attempts, each after the server's Retry-After (capped).

const RETRYABLE_CODES = new Set(['service_unavailable', 'rate_limit_exceeded']);

export async function withRetries<T>(
  call: () => Promise<{ data?: T; error?: unknown; response: Response }>,
  options: { attempts?: number; maxWaitMs?: number; onRetry?: (waitMs: number, why: string) => void } = {},
): Promise<{ data?: T; error?: unknown; response: Response }> {
  const attempts = options.attempts ?? 3;
  for (let attempt = 1; ; attempt++) {
    const result = await call();
    const { response } = result;
    const code = (result.error as { error?: { code?: string } } | undefined)?.error?.code;
    const retryAfter = Number(response.headers.get('retry-after'));
    const retryable = (response.status === 503 || response.status === 429) && code !== undefined && RETRYABLE_CODES.has(code) && retryAfter > 0;
    if (!retryable || attempt >= attempts) return result;
    const waitMs = Math.min(retryAfter * 1_000, options.maxWaitMs ?? 10_000);
    options.onRetry?.(waitMs, `${code} (HTTP ${response.status})`);
    await new Promise((resolve) => setTimeout(resolve, waitMs));
  }
}
