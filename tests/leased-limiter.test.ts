// A replica takes its share of a shared rate limit in leases: never more than the limit passes,
// the shared store is asked once per lease, and limits under 100 points are counted exactly.
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { describe, expect, it, vi } from 'vitest';
import { LeasedLimiter, leaseSizeFor, type PointLimiter } from '../services/leased-limiter.ts';

/** A shared counter (rate-limiter-flexible's own, in memory) that counts how often it is asked. */
function sharedCounter(points: number, duration = 60) {
  const store = new RateLimiterMemory({ points, duration });
  const counter = {
    calls: 0,
    consume(key: string, n?: number) {
      counter.calls++;
      return store.consume(key, n);
    },
  } satisfies PointLimiter & { calls: number };
  return counter;
}

/** Consumes `n` points one after another; the outcome of each (remaining points, or 'refused'). */
async function spend(limiter: PointLimiter, key: string, n: number): Promise<(number | 'refused')[]> {
  const out: (number | 'refused')[] = [];
  for (let i = 0; i < n; i++) {
    try {
      out.push((await limiter.consume(key)).remainingPoints);
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw err;
      out.push('refused');
    }
  }
  return out;
}

describe('leaseSizeFor', () => {
  it('is 1% of the limit, at most 16, and 1 below 200 points', () => {
    expect([3, 20, 100, 199, 200, 600, 1_600, 10_000, 1e9].map(leaseSizeFor)).toEqual([1, 1, 1, 1, 2, 6, 16, 16, 16]);
  });
});

describe('LeasedLimiter', () => {
  it('lets exactly the limit through on one replica, with exact remaining points, asking the store once per lease', async () => {
    const shared = sharedCounter(100);
    const limiter = new LeasedLimiter(shared, 100, 10);
    const outcomes = await spend(limiter, 'k', 103);
    expect(outcomes.slice(0, 100)).toEqual(Array.from({ length: 100 }, (_, i) => 99 - i));
    expect(outcomes.slice(100)).toEqual(['refused', 'refused', 'refused']);
    // 10 leases; the last left the shared counter at 0, so the refusals after it are answered locally.
    expect(shared.calls).toBe(10);
  });

  it('hands out the points that were left when a lease overshoots the limit', async () => {
    const shared = sharedCounter(25);
    const outcomes = await spend(new LeasedLimiter(shared, 25, 10), 'k', 27);
    expect(outcomes.filter((o) => o !== 'refused')).toHaveLength(25);
    expect(outcomes.slice(24)).toEqual([0, 'refused', 'refused']);
  });

  it('never lets more than the limit through across replicas, and loses at most a lease per other replica', async () => {
    const shared = sharedCounter(200);
    const replicas = [new LeasedLimiter(shared, 200, 8), new LeasedLimiter(shared, 200, 8), new LeasedLimiter(shared, 200, 8)];
    let passed = 0;
    for (let i = 0; i < 300; i++) {
      const outcome = await spend(replicas[i % 3]!, 'k', 1);
      if (outcome[0] !== 'refused') passed++;
    }
    expect(passed).toBeLessThanOrEqual(200);
    expect(passed).toBeGreaterThanOrEqual(200 - 2 * 7);
  });

  it('takes one lease for concurrent requests of a key', async () => {
    const shared = sharedCounter(1_000);
    const limiter = new LeasedLimiter(shared, 1_000, 20);
    const results = await Promise.all(Array.from({ length: 50 }, () => limiter.consume('k')));
    expect(results.map((r) => r.remainingPoints).sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => 950 + i));
    expect(shared.calls).toBe(3);
  });

  it('keeps keys apart and starts afresh when the window ends', async () => {
    // The clock is the test's: the 1-second window ends when the test moves time on, not after a wait.
    vi.useFakeTimers();
    try {
      const shared = sharedCounter(100, 1);
      const limiter = new LeasedLimiter(shared, 100, 10);
      expect((await spend(limiter, 'a', 101)).at(-1)).toBe('refused');
      expect(await spend(limiter, 'b', 1)).toEqual([99]);
      vi.advanceTimersByTime(900);
      expect(await spend(limiter, 'a', 1)).toEqual(['refused']);
      vi.advanceTimersByTime(200);
      expect(await spend(limiter, 'a', 1)).toEqual([99]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('leases nothing from a refusal that counted nothing (a blocked key), and refuses locally until its window ends', async () => {
    let calls = 0;
    const blocked: PointLimiter = {
      consume: () => {
        calls++;
        return Promise.reject(new RateLimiterRes(0, 60_000, 0, false));
      },
    };
    const limiter = new LeasedLimiter(blocked, 1_000, 10);
    expect(await spend(limiter, 'k', 3)).toEqual(['refused', 'refused', 'refused']);
    expect(calls).toBe(1);
  });

  it('passes on a store failure that is not a refusal', async () => {
    const broken: PointLimiter = { consume: () => Promise.reject(new Error('store down')) };
    await expect(new LeasedLimiter(broken, 100, 10).consume('k')).rejects.toThrow('store down');
  });
});
