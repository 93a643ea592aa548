import type Koa from 'koa';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { errors } from '../../domain/errors.ts';
import type { RateLimitPolicy } from '../../services/rate-limiters.ts';

/**
 * Consumes one point of `policy` for `key` and sets the IETF RateLimit / RateLimit-Policy headers;
 * when the point was not there, throws 429 rate_limit_exceeded with Retry-After. A store that fails
 * is a 503 (the Postgres store falls back to memory first, so this is rare).
 */
export async function consumePoint(ctx: Koa.Context, policy: RateLimitPolicy, key: string): Promise<void> {
  let res: RateLimiterRes;
  let allowed = true;
  try {
    res = await policy.limiter.consume(key);
  } catch (outcome) {
    if (!(outcome instanceof RateLimiterRes)) throw errors.unavailable();
    res = outcome;
    allowed = false;
  }
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
  return async function rateLimit(ctx, next) {
    await consumePoint(ctx, policy, keyOf(ctx));
    await next();
  };
}
