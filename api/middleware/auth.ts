import type Koa from 'koa';
import type { KeyKind } from '../../domain/api-keys.ts';
import { errors } from '../../domain/errors.ts';
import type { Principal } from '../../services/keys.ts';

/** The principal of a key, or null; at once when it is known (a cached key), else as a promise. */
export type Authenticator = (secret: string, kind: KeyKind) => Principal | null | Promise<Principal | null>;

/**
 * Requires `Authorization: Bearer <key>` with an active key of `kind`. Any other
 * case is the same 401 invalid_api_key, so a caller cannot probe which keys exist.
 * It runs first on an authenticated route: before the per-key limit and before
 * the body is read. `onFailure` runs on every failed attempt before the 401
 * (the per-address limit of failed attempts, which answers 429 once spent).
 */
export function requireKey(kind: KeyKind, authenticate: Authenticator, onFailure?: (ctx: Koa.Context) => void | Promise<void>): Koa.Middleware {
  const refuse = async (ctx: Koa.Context): Promise<never> => {
    await onFailure?.(ctx);
    throw errors.invalidApiKey();
  };
  // Not async: a cached key is admitted without a promise of this middleware's own.
  return function requireKey(ctx, next) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(ctx.get('authorization'));
    if (!match?.[1]) return refuse(ctx);
    const admit = (principal: Principal | null) => {
      if (!principal) return refuse(ctx);
      ctx.state.principal = principal;
      return next();
    };
    let found: ReturnType<Authenticator>;
    try {
      found = authenticate(match[1], kind);
    } catch {
      throw errors.unavailable();
    }
    if (!(found instanceof Promise)) return admit(found);
    return found.then(admit, () => {
      throw errors.unavailable();
    });
  };
}
