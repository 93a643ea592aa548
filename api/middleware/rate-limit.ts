import type Koa from 'koa';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { errors } from '../../domain/errors.ts';
import type { RateLimitPolicy } from '../../services/rate-limiters.ts';

/**
 * Consumes one point per request for the caller named by `keyOf`, sets the IETF
 * RateLimit / RateLimit-Policy headers, and answers 429 with Retry-After when spent.
 */
export function rateLimit(policy: RateLimitPolicy, keyOf: (ctx: Koa.Context) => string): Koa.Middleware {
  const policyHeader = `"${policy.name}";q=${policy.points};w=${policy.windowSeconds}`;
  return async function rateLimit(ctx, next) {
    let res: RateLimiterRes;
    let allowed = true;
    try {
      res = await policy.limiter.consume(keyOf(ctx));
    } catch (outcome) {
      if (!(outcome instanceof RateLimiterRes)) throw errors.unavailable();
      res = outcome;
      allowed = false;
    }
    const resetSeconds = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
    ctx.set('RateLimit-Policy', policyHeader);
    ctx.set('RateLimit', `"${policy.name}";r=${Math.max(0, res.remainingPoints)};t=${resetSeconds}`);
    if (!allowed) throw errors.rateLimited(resetSeconds);
    await next();
  };
}
