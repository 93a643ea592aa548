import type Koa from 'koa';
import { newId } from '../../domain/ids.ts';

// Echo a caller's id only when it is short and plain, so it is safe in logs and headers.
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The request's id: the caller's `x-request-id` when sane, else a new one. */
export function requestIdFor(given: string | string[] | undefined): string {
  return typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : newId('req', 12);
}

/** Sets ctx.state.requestId and the x-request-id response header on every response. */
export function requestId(): Koa.Middleware {
  // Not async: nothing runs after next(), so no promise of its own per request.
  return function requestId(ctx, next) {
    const id = requestIdFor(ctx.req.headers['x-request-id']);
    ctx.state.requestId = id;
    ctx.set('x-request-id', id);
    return next();
  };
}
