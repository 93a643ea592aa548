import { bodyParser } from '@koa/bodyparser';
import type Koa from 'koa';
import { errors } from '../../domain/errors.ts';
import { exceedsDepth, walkJson } from '../../domain/json-walk.ts';

/** Deeper than any body of the contract needs; deeper bodies are refused before anything walks them. */
export const MAX_JSON_DEPTH = 64;

/** The methods whose body is read (as @koa/bodyparser's default). */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/** The one media type a request body may have. No `+json` suffix types: the contract has none. */
export const JSON_MEDIA_TYPE = 'application/json';

/**
 * JSON bodies only, bounded in size and nesting; parse failures become contract errors (400 / 413 / 415).
 * Mounted per route, after authentication and the rate limit, so an unauthenticated or limited
 * request is answered before its body is read.
 */
export function jsonBody(limitBytes: number): Koa.Middleware {
  const parse = parser(limitBytes);
  return async function jsonBody(ctx, next) {
    refuseOtherMediaTypes(ctx);
    await parse(ctx, async () => {
      if (exceedsDepth(ctx.request.body, MAX_JSON_DEPTH)) throw errors.invalidRequest(`The JSON body nests deeper than ${MAX_JSON_DEPTH} levels.`, null);
      await next();
    });
  };
}

/** True when the request says it carries a body (a positive Content-Length, or chunked). */
export function announcesBody(ctx: Koa.Context): boolean {
  return Number(ctx.get('content-length') || 0) > 0 || ctx.get('transfer-encoding') !== '';
}

/**
 * A body must be `application/json` (RFC 8259: UTF-8). Another media type, `+json` suffix types
 * such as `application/merge-patch+json` included, or a charset other than utf-8 is 415
 * unsupported_media_type before a byte of it is read: it is never parsed as something it is not.
 */
function refuseOtherMediaTypes(ctx: Koa.Context): void {
  if (!BODY_METHODS.has(ctx.method) || !announcesBody(ctx)) return;
  if (ctx.is(JSON_MEDIA_TYPE) !== JSON_MEDIA_TYPE) throw errors.unsupportedMediaType();
  const charset = ctx.request.charset.toLowerCase();
  if (charset !== '' && charset !== 'utf-8' && charset !== 'utf8') throw errors.unsupportedMediaType();
}

function parser(limitBytes: number): Koa.Middleware {
  return bodyParser({
    // Its default JSON list also has +json types; refuseOtherMediaTypes lets only application/json through.
    enableTypes: ['json'],
    jsonLimit: limitBytes,
    encoding: 'utf-8',
    onError(err: Error & { status?: number; body?: unknown }) {
      if (err.status === 413) throw errors.payloadTooLarge(limitBytes);
      if (err.status === 415) throw errors.unsupportedMediaType();
      const protoPath = typeof err.body === 'string' ? protoKeyPath(err.body) : null;
      if (protoPath !== null)
        throw errors.invalidRequest('The key "__proto__" is not accepted in a JSON body (it would reach object prototypes); rename it.', protoPath);
      throw errors.invalidJson();
    },
  }) as unknown as Koa.Middleware;
}

/**
 * Valid JSON that the parser (bourne) refuses to build because a `__proto__` key would reach object
 * prototypes: where it is, so the answer names it instead of calling valid JSON invalid.
 * JSON.parse itself makes such a key a plain own property, so the walk is safe.
 */
function protoKeyPath(text: string): string | null {
  let root: unknown;
  try {
    root = JSON.parse(text);
  } catch {
    return null;
  }
  for (const node of walkJson(root)) {
    if (node.key === '__proto__') return node.path;
  }
  return null;
}
