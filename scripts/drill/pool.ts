// Bounded concurrency for the drill's client side: a thousand runs created, polled or approved at
// once would measure the drill's own request storm, not the service (a client is asked to keep to
// about 20 requests in flight).

/** The rollout drill's client concurrency: what `npm run scale` and the measured rates assume. */
export const CLIENT_CONCURRENCY = 20;

/** `work` over `items`, at most `concurrency` at a time, in order of `items`; the results in that order. */
export async function pooled<T, R>(items: readonly T[], concurrency: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, lane));
  return results;
}

/** The time left until `ms` from now, at least `floorMs`: shared by every item of a pooled wait, so the whole wait is bounded. */
export function timeLeft(ms: number, floorMs = 1_000): () => number {
  const end = Date.now() + ms;
  return () => Math.max(floorMs, end - Date.now());
}
