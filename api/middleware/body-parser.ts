import { bodyParser } from '@koa/bodyparser';
import type Koa from 'koa';
import { errors } from '../../domain/errors.ts';

/** JSON bodies only, bounded in size; parse failures become contract errors (400 / 413 / 415). */
export function jsonBody(limitBytes: number): Koa.Middleware {
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
