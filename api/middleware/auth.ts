import type Koa from 'koa';
import { type KeyKind, keyPrefixOf } from '../../domain/api-keys.ts';
import { errors } from '../../domain/errors.ts';
import type { Principal } from '../../services/keys.ts';

/** The principal of a key of one of `kinds`, or null; at once when it is known (a cached key), else as a promise. */
export type Authenticator = (secret: string, kinds: readonly KeyKind[]) => Principal | null | Promise<Principal | null>;

/** The key kinds each authenticated route kind takes (api/contract/route.ts AuthKind). */
export const KINDS_OF = {
  core: ['core'],
  workspace: ['workspace'],
  approver: ['approver'],
  reader: ['core', 'approver'],
} as const satisfies Record<string, readonly KeyKind[]>;
export type KeyedAuth = keyof typeof KINDS_OF;

const KIND_WORDS: Record<KeyKind, string> = {
  core: `a core key (${keyPrefixOf('core')}…)`,
  workspace: `a workspace key (${keyPrefixOf('workspace')}…)`,
  approver: `an approver key (${keyPrefixOf('approver')}…)`,
};

/** The key a route needs, in words; an approver route says why a submitting key is not one. */
export function keyNeeded(auth: KeyedAuth): string {
  const words = KINDS_OF[auth].map((k) => KIND_WORDS[k]).join(' or ');
  return auth === 'approver' ? `${words}: a key that submits runs never decides them` : words;
}

/**
 * Requires `Authorization: Bearer <key>` with an active key of a kind `auth` takes. Any other
 * case is the same 401 invalid_api_key, naming the kinds the route takes whatever was sent,
 * so a caller cannot probe which keys exist.
 * It runs first on an authenticated route: before the per-key limit and before
 * the body is read. `onFailure` runs on every failed attempt before the 401
 * (the per-address limit of failed attempts, which answers 429 once spent).
 */
export function requireKey(auth: KeyedAuth, authenticate: Authenticator, onFailure?: (ctx: Koa.Context) => void | Promise<void>): Koa.Middleware {
  const kinds = KINDS_OF[auth];
  const needed = keyNeeded(auth);
  const refuse = async (ctx: Koa.Context): Promise<never> => {
    await onFailure?.(ctx);
    throw errors.invalidApiKey(needed);
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
      found = authenticate(match[1], kinds);
    } catch {
      throw errors.unavailable();
    }
    if (!(found instanceof Promise)) return admit(found);
    return found.then(admit, () => {
      throw errors.unavailable();
    });
  };
}
