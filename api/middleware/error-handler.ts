import type Koa from 'koa';
import type { Logger } from 'pino';
import { ApiError, errors, toErrorBody } from '../../domain/errors.ts';

/**
 * Turns every failure into the contract's error object. ApiErrors carry their
 * own status and code; anything else is logged (without request content) and
 * answered with an opaque 500 that reveals no internals.
 */
export function errorHandler(logger: Logger): Koa.Middleware {
  return async function errorHandler(ctx, next) {
    try {
      await next();
      // Nothing answered: an unknown route (404 or 501) or a known path with another method (405).
      if (ctx.body == null || ctx.body === '') {
        if (ctx.status === 404 || ctx.status === 501) throw errors.notFound();
        if (ctx.status === 405) throw errors.methodNotAllowed();
      }
    } catch (caught) {
      const err = caught instanceof ApiError ? caught : unexpected(caught, ctx, logger);
      ctx.status = err.status;
      ctx.set(err.headers);
      ctx.body = toErrorBody(err, ctx.state.requestId as string);
    }
  };
}

function unexpected(caught: unknown, ctx: Koa.Context, logger: Logger): ApiError {
  const e = caught as { name?: string; message?: string; stack?: string };
  logger.error(
    { request_id: ctx.state.requestId, err: { name: e?.name, message: e?.message, stack: e?.stack } },
    'unhandled error',
  );
  return errors.internal();
}
