import { bodyParser } from '@koa/bodyparser';
import type Koa from 'koa';
import { errors } from '../../domain/errors.ts';
import { exceedsDepth } from '../../domain/json-walk.ts';

/** Deeper than any body of the contract needs; deeper bodies are refused before anything walks them. */
export const MAX_JSON_DEPTH = 64;

/** JSON bodies only, bounded in size and nesting; parse failures become contract errors (400 / 413 / 415). */
export function jsonBody(limitBytes: number): Koa.Middleware {
  const parse = parser(limitBytes);
  return async function jsonBody(ctx, next) {
    await parse(ctx, async () => {
      if (exceedsDepth(ctx.request.body, MAX_JSON_DEPTH)) throw errors.invalidRequest(`The JSON body nests deeper than ${MAX_JSON_DEPTH} levels.`, null);
      await next();
    });
  };
}

function parser(limitBytes: number): Koa.Middleware {
  return bodyParser({
    enableTypes: ['json'],
    jsonLimit: limitBytes,
    encoding: 'utf-8',
    onError(err: Error & { status?: number }) {
      if (err.status === 413) throw errors.payloadTooLarge(limitBytes);
      if (err.status === 415) throw errors.unsupportedMediaType();
      throw errors.invalidJson();
    },
  }) as unknown as Koa.Middleware;
}
