// Mounts declared routes on a Koa router: authentication, rate limiting, the
// JSON body (read only after both), request validation against the route's
// zod schemas, then the handler. In
// development and test the response is checked against its declared schema too,
// so a handler that drifts from the contract fails loudly.
import { Readable } from 'node:stream';
import Router from '@koa/router';
import type Koa from 'koa';
import type { z } from 'zod';
import { type ApiError, errors } from '../../domain/errors.ts';
import { findString } from '../../domain/json-walk.ts';
import { findSecret } from '../../domain/secrets.ts';
import { isUnstorable, toStorable } from '../../domain/storable-text.ts';
import type { RateLimiters } from '../../services/rate-limiters.ts';
import { type Authenticator, requireKey } from '../middleware/auth.ts';
import { announcesBody, jsonBody } from '../middleware/body-parser.ts';
import { consumePoint, rateLimit } from '../middleware/rate-limit.ts';
import { paramOf } from './param-path.ts';
import { effectiveRateLimit, type RouteSpec } from './route.ts';

export interface RouterDeps {
  authenticate: Authenticator;
  rateLimiters: RateLimiters;
  clientAddress: (ctx: Koa.Context) => string;
  checkResponses: boolean;
  /** Size limit of a JSON request body. */
  bodyLimitBytes: number;
}

/** Declared headers whose invalid value has an error code of its own (the contract's error table), by lower-case name. */
const HEADER_ERRORS: Record<string, () => ApiError> = {
  'idempotency-key': errors.invalidIdempotencyKey,
};

function parseOrThrow<T extends z.ZodType>(schema: T, value: unknown, where: 'body' | 'query' | 'path' | 'header'): z.output<T> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const headerError = where === 'header' ? HEADER_ERRORS[String(issue.path[0])] : undefined;
  if (headerError) throw headerError();
  const param = paramOf(issue, where);
  if (issue.code === 'unrecognized_keys') throw errors.unsupportedParameter(param ?? issue.keys[0] ?? where);
  const field = param ?? (where === 'body' ? 'request body' : where);
  throw errors.invalidRequest(`Invalid ${field}: ${issue.message}`, param);
}

/** Koa route path (`/runs/:id`) from an OpenAPI path (`/runs/{id}`). */
function koaPath(openApiPath: string): string {
  return openApiPath.replace(/\{([^}]+)\}/g, ':$1');
}


const keysOf = (schema: unknown) => Object.keys((schema as { shape?: Record<string, unknown> } | undefined)?.shape ?? {});
const pick = (from: Record<string, unknown>, keys: string[]) => Object.fromEntries(keys.filter((k) => k in from).map((k) => [k, from[k]]));

/**
 * No field of the contract needs a NUL or a lone surrogate, and Postgres cannot store either: one
 * anywhere in what the route reads (its body, declared query keys, path, declared headers) is a 400
 * naming where, before anything reaches the database. Parts a route does not declare are never read.
 */
function refuseUnstorable(ctx: Koa.Context, route: RouteSpec, declared: { query: string[]; headers: string[] }): void {
  const headers = Object.fromEntries(declared.headers.map((h) => [h, ctx.get(h)]));
  const places = [
    ['body', route.request?.body ? ctx.request.body : undefined],
    ['query', pick(ctx.query, declared.query)],
    ['path', ctx.params],
    ['header', headers],
  ] as const;
  for (const [where, value] of places) {
    const found = findString(value, isUnstorable);
    // The path may run through the offending key itself: it is named, but never echoed with the character.
    const at = found === null ? null : toStorable(found);
    if (at !== null) {
      throw errors.invalidRequest(`Invalid ${at || where}: must be text without NUL (U+0000) or unpaired surrogate characters.`, at || (where === 'body' ? null : where));
    }
  }
}

function validateInput(route: RouteSpec): Koa.Middleware {
  const { params, query, body, headers } = route.request ?? {};
  const declared = { query: keysOf(query), headers: keysOf(headers) };
  return async function validateInput(ctx, next) {
    refuseUnstorable(ctx, route, declared);
    if (route.refuseSecrets) {
      const secretAt = findSecret(ctx.request.body);
      if (secretAt) throw errors.credentialValueRefused(secretAt);
    }
    ctx.state.input = {
      headers: headers ? parseOrThrow(headers, ctx.headers, 'header') : {},
      params: params ? parseOrThrow(params, ctx.params, 'path') : {},
      query: query ? parseOrThrow(query, ctx.query, 'query') : {},
      body: body ? parseOrThrow(body, requireJsonBody(ctx), 'body') : undefined,
    };
    await next();
  };
}

function requireJsonBody(ctx: Koa.Context): unknown {
  const raw = (ctx.request as { rawBody?: string }).rawBody;
  if (raw === undefined) {
    // jsonBody already answered 415 for a body of another type; this is a request without one.
    if (announcesBody(ctx)) throw errors.unsupportedMediaType();
    throw errors.invalidRequest('A JSON request body is required.', null);
  }
  return ctx.request.body;
}

function runHandler(route: RouteSpec, checkResponses: boolean): Koa.Middleware {
  return async function runHandler(ctx) {
    const input = ctx.state.input as { params: unknown; query: unknown; body: unknown; headers: Record<string, string | undefined> };
    const result = await route.handler({ ...input, principal: ctx.state.principal, ctx });
    if (checkResponses) {
      const schema = route.responses[result.status]?.schema;
      if (!route.responses[result.status]) {
        throw new Error(`${route.operationId} answered undeclared status ${result.status}`);
      }
      // Streams are checked chunk by chunk by their writer, not here.
      if (schema && !(result.body instanceof Readable)) {
        const check = schema.safeParse(result.body);
        if (!check.success) {
          throw new Error(`${route.operationId} ${result.status} body breaks its schema: ${check.error.message}`);
        }
      }
    }
    ctx.status = result.status;
    if (result.headers) ctx.set(result.headers);
    ctx.body = result.body;
  };
}

/**
 * The order is the contract (api/contract/openapi.ts documents the headers it leads to):
 * 1. authentication: a failed attempt spends a point of the per-address `unauthenticated` limit
 *    (401 with its RateLimit headers, or 429 once spent), and nothing else runs;
 * 2. the route's limit: per key, or per address for the trial;
 * 3. the JSON body, for routes that take one: read and parsed only now (400 / 413 / 415);
 * 4. validation, then the handler.
 */
export function mountRoutes(routes: RouteSpec[], deps: RouterDeps): Router {
  // Paths match exactly as documented: `/v1/agent-runs/` and `/HEALTH` are not documented paths (404).
  const router = new Router({ strict: true, sensitive: true });
  const failedAuthentication = (ctx: Koa.Context) => consumePoint(ctx, deps.rateLimiters.unauthenticated, deps.clientAddress(ctx));
  const body = jsonBody(deps.bodyLimitBytes);
  for (const route of routes) {
    const chain: Koa.Middleware[] = [];
    if (route.auth !== 'none') chain.push(requireKey(route.auth, deps.authenticate, failedAuthentication));
    const limit = effectiveRateLimit(route);
    if (limit === 'per-key') {
      chain.push(rateLimit(deps.rateLimiters.perKey, (ctx) => (ctx.state.principal as { keyId: string }).keyId));
    } else if (limit === 'trial') {
      chain.push(rateLimit(deps.rateLimiters.trial, deps.clientAddress));
    }
    if (route.request?.body) chain.push(body);
    chain.push(validateInput(route), runHandler(route, deps.checkResponses));
    router.register(koaPath(route.path), [route.method.toUpperCase()], chain as never, {
      name: route.operationId,
    });
  }
  return router;
}

/**
 * 405 with an Allow header for a known path with another method (the error handler writes the body),
 * also for a method the router does not implement at all (TRACE, CONNECT, PROPFIND...), which the
 * router itself answers 501; on an unknown path that is a 404.
 */
export function allowedMethods(router: Router): Koa.Middleware {
  const inner = router.allowedMethods() as unknown as Koa.Middleware;
  return async function allowedMethods(ctx, next) {
    await inner(ctx, next);
    if (ctx.status !== 501 || (ctx.body != null && ctx.body !== '')) return;
    if (ctx.response.get('Allow')) {
      ctx.status = 405;
    } else {
      ctx.remove('Allow');
      ctx.status = 404;
    }
  };
}
