import type Koa from 'koa';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { errors } from '../../domain/errors.ts';
import type { RateLimitPolicy } from '../../services/rate-limiters.ts';

/**
 * Consumes one point of `policy` for `key` and sets the IETF RateLimit / RateLimit-Policy headers;
 * when the point was not there, throws 429 rate_limit_exceeded with Retry-After. A store that fails
 * is a 503 (the Postgres store falls back to memory first, so this is rare). A point this replica
 * holds in its lease (services/leased-limiter.ts) is decided at once, without a promise.
 */
export function consumePoint(ctx: Koa.Context, policy: RateLimitPolicy, key: string): void | Promise<void> {
  let granted: RateLimiterRes | undefined;
  try {
    granted = policy.limiter.consumeFromLease?.(key);
  } catch (outcome) {
    return answer(ctx, policy, refusal(outcome), false);
  }
  if (granted) return answer(ctx, policy, granted, true);
  return policy.limiter.consume(key).then(
    (res) => answer(ctx, policy, res, true),
    (outcome: unknown) => answer(ctx, policy, refusal(outcome), false),
  );
}

/** A limiter's refusal (a RateLimiterRes), or the 503 of a store that failed. */
function refusal(outcome: unknown): RateLimiterRes {
  if (!(outcome instanceof RateLimiterRes)) throw errors.unavailable();
  return outcome;
}

function answer(ctx: Koa.Context, policy: RateLimitPolicy, res: RateLimiterRes, allowed: boolean): void {
  const resetSeconds = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
  ctx.set('RateLimit-Policy', `"${policy.name}";q=${policy.points};w=${policy.windowSeconds}`);
  ctx.set('RateLimit', `"${policy.name}";r=${Math.max(0, res.remainingPoints)};t=${resetSeconds}`);
  if (!allowed) throw errors.rateLimited(resetSeconds);
}

/**
 * Consumes one point per request for the caller named by `keyOf`, sets the IETF
 * RateLimit / RateLimit-Policy headers, and answers 429 with Retry-After when spent.
 */
export function rateLimit(policy: RateLimitPolicy, keyOf: (ctx: Koa.Context) => string): Koa.Middleware {
  // Not async: a point from the lease goes on to the route without a promise of this middleware's own.
  return function rateLimit(ctx, next) {
    const pending = consumePoint(ctx, policy, keyOf(ctx));
    return pending ? pending.then(() => next()) : next();
  };
}
