// Rate limiters. The counters are shared by every API replica:
// - in Redis when REDIS_URL is set (RateLimiterRedis over ioredis);
// - otherwise in Postgres when DATABASE_URL is set, in the UNLOGGED rate_limits table (migration
//   0008) through a small pool of its own whose sessions run with synchronous_commit off: a
//   counter upsert no longer waits for a WAL flush, so requests of one key, which update the same
//   row, no longer queue behind each other's fsync. A crash may lose the counters (an UNLOGGED
//   table is emptied by crash recovery), which for rate limits is harmless;
// - in memory on PGlite (one process, so nothing to share).
// If the shared store fails, an in-memory limiter of the same policy takes over rather than
// failing requests. A shared store is asked in leases of a few points (services/leased-limiter.ts)
// for limits of 200 points a window and more.
import type { Redis } from 'ioredis';
import type pg from 'pg';
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRedis } from 'rate-limiter-flexible';
import { newPool } from '../db/pool.ts';
import { type KeyLimiter, LeasedLimiter, leaseSizeFor, type PointLimiter } from './leased-limiter.ts';

export interface RateLimitPolicy {
  /** Policy name shown in the RateLimit headers. */
  name: string;
  points: number;
  windowSeconds: number;
  limiter: KeyLimiter;
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

/** Where the counters live. */
export type RateLimitStore = { kind: 'memory' } | { kind: 'postgres'; pool: pg.Pool } | { kind: 'redis'; client: Redis; keyPrefix: string };

function policy(name: string, limits: Limits, store: RateLimitStore): RateLimitPolicy {
  const base = { keyPrefix: name, points: limits.points, duration: limits.windowSeconds };
  const memory = new RateLimiterMemory(base);
  let limiter: PointLimiter = memory;
  if (store.kind === 'postgres') {
    limiter = new RateLimiterPostgres({
      ...base,
      storeClient: store.pool,
      tableName: 'rate_limits',
      tableCreated: true, // created by our migrations
      clearExpiredByTimeout: false,
      insuranceLimiter: memory,
    });
  } else if (store.kind === 'redis') {
    limiter = new RateLimiterRedis({
      ...base,
      keyPrefix: `${store.keyPrefix}${name}`,
      storeClient: store.client,
      // Not connected: the in-memory insurance answers at once instead of the request waiting.
      rejectIfRedisNotReady: true,
      insuranceLimiter: memory,
    });
  }
  const leaseSize = leaseSizeFor(limits.points);
  const perRequest: KeyLimiter = limiter !== memory && leaseSize > 1 ? new LeasedLimiter(limiter, limits.points, leaseSize) : limiter;
  return { name, points: limits.points, windowSeconds: limits.windowSeconds, limiter: perRequest };
}

export function createRateLimiters(limits: { perKey: Limits; trial: Limits }, store: RateLimitStore = { kind: 'memory' }): RateLimiters {
  return {
    perKey: policy('per-key', limits.perKey, store),
    trial: policy('trial', limits.trial, store),
    unauthenticated: policy('unauthenticated', limits.trial, store),
  };
}

/**
 * The Postgres pool for the counters: its own, small, with synchronous_commit off in every session
 * (a startup option of each connection, so it holds before the limiter's first statement).
 */
export function rateLimitPool(url: string, max: number): pg.Pool {
  const pool = newPool({ connectionString: url, max, connectionTimeoutMillis: 5_000, options: '-c synchronous_commit=off' });
  // An idle client losing its server must not crash the process; the next query reports it.
  pool.on('error', () => {});
  return pool;
}
