// Mounts declared routes on a Koa router: authentication, rate limiting, the
// JSON body (read only after both), request validation against the route's
// zod schemas, then the handler. In tests (CHECK_RESPONSES) the response is
// checked against its declared schema too, so a handler that drifts from the
// contract fails loudly.
import { Readable } from 'node:stream';
import Router, { type RouterMiddleware } from '@koa/router';
import type Koa from 'koa';
import compose from 'koa-compose';
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
import { effectiveRateLimit, type RouteResult, type RouteSpec } from './route.ts';

export interface RouterDeps {
  authenticate: Authenticator;
  rateLimiters: RateLimiters;
  clientAddress: (ctx: Koa.Context) => string;
  checkResponses: boolean;
  /** Size limit of a JSON request body. */
  bodyLimitBytes: number;
  /** What start-up is doing, or undefined once it has finished (runtime/startup.ts); absent: always finished. */
  starting?: () => string | undefined;
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

interface Declared {
  query: string[];
  headers: string[];
}

type Place = [where: 'body' | 'query' | 'path' | 'header', value: (ctx: Koa.Context) => unknown];

/**
 * The parts of a request a route reads, decided once per route: no field of the contract needs a NUL or
 * a lone surrogate, and Postgres cannot store either, so one anywhere in them is refused (refuseUnstorable).
 */
function readPlaces(route: RouteSpec, declared: Declared): Place[] {
  const places: Place[] = [];
  if (route.request?.body) places.push(['body', (ctx) => ctx.request.body]);
  if (declared.query.length) places.push(['query', (ctx) => pick(ctx.query, declared.query)]);
  // Every path with a parameter, whether or not the route declares a schema for it.
  if (route.path.includes('{')) places.push(['path', (ctx) => ctx.params]);
  if (declared.headers.length) places.push(['header', (ctx) => Object.fromEntries(declared.headers.map((h) => [h, ctx.get(h)]))]);
  return places;
}

/**
 * A NUL or lone surrogate anywhere in what the route reads (its body, declared query keys, path, declared
 * headers) is a 400 naming where, before anything reaches the database. Parts a route does not declare are never read.
 */
function refuseUnstorable(ctx: Koa.Context, places: Place[]): void {
  for (const [where, value] of places) {
    const found = findString(value(ctx), isUnstorable);
    // The path may run through the offending key itself: it is named, but never echoed with the character.
    const at = found === null ? null : toStorable(found);
    if (at !== null) {
      throw errors.invalidRequest(
        `Invalid ${at || where}: must be text without NUL (U+0000) or unpaired surrogate characters.`,
        at || (where === 'body' ? null : where),
      );
    }
  }
}

/** Validation, then the handler: the last link of every route's chain. */
function validateAndHandle(route: RouteSpec, checkResponses: boolean): Koa.Middleware {
  const { params, query, body, headers } = route.request ?? {};
  const places = readPlaces(route, { query: keysOf(query), headers: keysOf(headers) });
  const respond = (ctx: Koa.Context, result: RouteResult) => {
    if (checkResponses) checkResponse(route, result);
    ctx.status = result.status;
    if (result.headers) ctx.set(result.headers);
    ctx.body = result.body;
  };
  // Not async: a handler that answers at once (/health, from its status in memory) costs no promise here.
  return function validateAndHandle(ctx) {
    refuseUnstorable(ctx, places);
    if (route.refuseSecrets) {
      const secretAt = findSecret(ctx.request.body);
      if (secretAt) throw errors.credentialValueRefused(secretAt);
    }
    const result = route.handler({
      headers: (headers ? parseOrThrow(headers, ctx.headers, 'header') : {}) as Record<string, string | undefined>,
      params: params ? parseOrThrow(params, ctx.params, 'path') : {},
      query: query ? parseOrThrow(query, ctx.query, 'query') : {},
      body: body ? parseOrThrow(body, requireJsonBody(ctx), 'body') : undefined,
      principal: ctx.state.principal,
      ctx,
    });
    if (result instanceof Promise) return result.then((answered) => respond(ctx, answered));
    respond(ctx, result);
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

/** In tests (CHECK_RESPONSES): a handler that drifts from its declared responses fails loudly. */
function checkResponse(route: RouteSpec, result: RouteResult): void {
  const declared = route.responses[result.status];
  if (!declared) throw new Error(`${route.operationId} answered undeclared status ${result.status}`);
  // Streams are checked chunk by chunk by their writer, not here.
  if (declared.schema && !(result.body instanceof Readable)) {
    const check = declared.schema.safeParse(result.body);
    if (!check.success) {
      throw new Error(`${route.operationId} ${result.status} body breaks its schema: ${check.error.message}`);
    }
  }
}

/**
 * Until start-up has finished, a route that needs a dependency answers 503 "starting (<step>)": ready
 * means ready, for the API as for /health. Those are the routes whose contract has a 503 (an
 * authenticated or rate-limited one: api/contract/openapi.ts); the docs, the job list and the codec
 * need none, and answer as soon as this app serves (api/app.ts createStartingApp answers before).
 */
function refuseWhileStarting(starting: () => string | undefined): Koa.Middleware {
  return function refuseWhileStarting(_ctx, next) {
    const step = starting();
    if (step !== undefined) throw errors.starting(step);
    return next();
  };
}

/** The chain of one route, composed once at start-up (not per request). */
function routeChain(
  route: RouteSpec,
  deps: RouterDeps,
  body: Koa.Middleware,
  failedAuthentication: (ctx: Koa.Context) => void | Promise<void>,
): Koa.Middleware {
  const chain: Koa.Middleware[] = [];
  const limit = effectiveRateLimit(route);
  if (deps.starting && (route.auth !== 'none' || limit !== 'none')) chain.push(refuseWhileStarting(deps.starting));
  if (route.auth !== 'none') chain.push(requireKey(route.auth, deps.authenticate, failedAuthentication));
  if (limit === 'per-key') {
    chain.push(rateLimit(deps.rateLimiters.perKey, (ctx) => (ctx.state.principal as { keyId: string }).keyId));
  } else if (limit === 'trial') {
    chain.push(rateLimit(deps.rateLimiters.trial, deps.clientAddress));
  }
  if (route.request?.body) chain.push(body);
  chain.push(validateAndHandle(route, deps.checkResponses));
  return chain.length === 1 ? chain[0]! : compose(chain);
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/**
 * The routes, on `@koa/router` (the customer's card names it). Matching is exact, as documented:
 * case-sensitive (`sensitive`), no trailing slash (`strict`), no empty parameter; a static path
 * wins over a parameter (`/v1/agent-runs/export` over `/v1/agent-runs/:run_id`: `exclusive:
 * 'specificity'`). A GET route answers HEAD too (Koa leaves the body out). A path that does not
 * percent-decode (`%zz`) keeps its parameters as written, and the route's validation answers it.
 *
 * Each route's chain runs in this order, which is the contract (api/contract/openapi.ts documents
 * the headers it leads to):
 * 1. authentication: a failed attempt spends a point of the per-address `unauthenticated` limit
 *    (401 with its RateLimit headers, or 429 once spent), and nothing else runs;
 * 2. the route's limit: per key, or per address for the trial;
 * 3. the JSON body, for routes that take one: read and parsed only now (400 / 413 / 415);
 * 4. validation, then the handler.
 *
 * A known path with a method it does not have is 405 with `Allow` (the error handler writes the
 * body), OPTIONS on a known path 200 with `Allow`; an unknown path falls through to 404.
 */
export function mountRoutes(routes: RouteSpec[], deps: RouterDeps): Koa.Middleware[] {
  const router = new Router({ sensitive: true, strict: true, exclusive: 'specificity' });
  const failedAuthentication = (ctx: Koa.Context) => consumePoint(ctx, deps.rateLimiters.unauthenticated, deps.clientAddress(ctx));
  const body = jsonBody(deps.bodyLimitBytes);
  for (const route of routes) {
    const chain = routeChain(route, deps, body, failedAuthentication);
    const middleware: Koa.Middleware = route.logFailuresOnly
      ? (ctx, next) => {
          ctx.state.logFailuresOnly = true;
          return chain(ctx, next);
        }
      : chain;
    router.register(koaPath(route.path), [route.method.toUpperCase()], middleware as unknown as RouterMiddleware);
  }
  // Two middleware for the app to use in turn (not composed into one: a nested chain costs every request a dispatch).
  return [router.routes() as unknown as Koa.Middleware, methodNotAllowed(router)];
}

/** After the router: a known path with another method is 405 (OPTIONS: 200) with `Allow`; anything else goes on to 404. */
function methodNotAllowed(router: Router): Koa.Middleware {
  return function methodNotAllowed(ctx, next) {
    const layers = router.match(ctx.path, ctx.method).path;
    const allowed = METHODS.filter((m) => layers.some((layer) => layer.methods.includes(m)));
    if (allowed.length === 0) return next();
    ctx.set('Allow', allowed.join(', '));
    if (ctx.method === 'OPTIONS') {
      ctx.status = 200;
      ctx.body = '';
    } else {
      ctx.status = 405;
    }
    return undefined;
  };
}
