import type Koa from 'koa';
import type { KeyKind } from '../../domain/api-keys.ts';
import { errors } from '../../domain/errors.ts';
import type { Principal } from '../../services/keys.ts';

export type Authenticator = (secret: string, kind: KeyKind) => Promise<Principal | null>;

/**
 * Requires `Authorization: Bearer <key>` with an active key of `kind`. Any other
 * case is the same 401 invalid_api_key, so a caller cannot probe which keys exist.
 */
export function requireKey(kind: KeyKind, authenticate: Authenticator): Koa.Middleware {
  return async function requireKey(ctx, next) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(ctx.get('authorization'));
    if (!match?.[1]) throw errors.invalidApiKey();
    let principal: Principal | null;
    try {
      principal = await authenticate(match[1], kind);
    } catch {
      throw errors.unavailable();
    }
    if (!principal) throw errors.invalidApiKey();
    ctx.state.principal = principal;
    await next();
  };
}
