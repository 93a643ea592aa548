// Rate limiters: in memory by default; on Postgres (DATABASE_URL set) the
// counters live in the rate_limits table so every API replica shares them. If
// the shared store fails, an in-memory limiter takes over rather than failing requests.
import type pg from 'pg';
import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterPostgres } from 'rate-limiter-flexible';

export interface RateLimitPolicy {
  /** Policy name shown in the RateLimit headers. */
  name: string;
  points: number;
  windowSeconds: number;
  limiter: RateLimiterAbstract;
}

export interface RateLimiters {
  perKey: RateLimitPolicy;
  trial: RateLimitPolicy;
  /**
   * Failed authentication (no, unknown, revoked or wrong-kind key), per client address, with the
   * trial's (public) limits: a caller without a valid key gets 401s until it is spent, then 429s.
   */
  unauthenticated: RateLimitPolicy;
}

interface Limits {
  points: number;
  windowSeconds: number;
}

function policy(name: string, limits: Limits, pool?: pg.Pool): RateLimitPolicy {
  const base = { keyPrefix: name, points: limits.points, duration: limits.windowSeconds };
  const memory = new RateLimiterMemory(base);
  const limiter = pool
    ? new RateLimiterPostgres({
        ...base,
        storeClient: pool,
        tableName: 'rate_limits',
        tableCreated: true, // created by our migrations
        clearExpiredByTimeout: false,
        insuranceLimiter: memory,
      })
    : memory;
  return { name, points: limits.points, windowSeconds: limits.windowSeconds, limiter };
}

export function createRateLimiters(limits: { perKey: Limits; trial: Limits }, pool?: pg.Pool): RateLimiters {
  return {
    perKey: policy('per-key', limits.perKey, pool),
    trial: policy('trial', limits.trial, pool),
    unauthenticated: policy('unauthenticated', limits.trial, pool),
  };
}
