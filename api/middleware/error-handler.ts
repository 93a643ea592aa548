import type Koa from 'koa';
import type { Logger } from 'pino';
import { ApiError, errors, toErrorBody } from '../../domain/errors.ts';
import type { OutageLog } from '../../services/outage-log.ts';

/**
 * Turns every failure into the contract's error object. ApiErrors carry their
 * own status and code; anything else is logged (without request content) and
 * answered with an opaque 500 that reveals no internals. A 503 (a dependency
 * unreachable) is expected while it lasts: it is logged at debug and counted
 * by the outage log, which logs the outage itself once.
 */
export function errorHandler(logger: Logger, outage?: OutageLog): Koa.Middleware {
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
      if (err.status === 503) outage?.refused();
      ctx.status = err.status;
      ctx.set(err.headers);
      ctx.body = toErrorBody(err, ctx.state.requestId as string);
    }
  };
}

// Failures that mean "a dependency is unreachable", not "a bug": Postgres connection
// errors and Temporal's gRPC UNAVAILABLE / DEADLINE_EXCEEDED. They answer 503.
const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', '57P01', '57P03', '08000', '08001', '08003', '08006', '53300']);

function isDependencyOutage(e: { name?: string; code?: unknown; cause?: unknown }): boolean {
  if (typeof e.code === 'string' && UNAVAILABLE_CODES.has(e.code)) return true;
  if ((e.name === 'ServiceError' || e.name === 'ConnectionError') && [undefined, 4, 14].includes((e.cause as { code?: number })?.code)) return true;
  if (e.code === 14 || e.code === 4) return true;
  return false;
}

/**
 * What may be logged of an unexpected error: its class, its codes (errno, SQLSTATE) and where it was
 * thrown. Never its message: a database error's message carries the query's parameters (run inputs,
 * vault text, key hashes) and parse errors quote the input.
 */
export function loggableError(e: { name?: string; code?: unknown; stack?: string; cause?: unknown }) {
  const cause = e.cause as { name?: string; code?: unknown } | undefined;
  const frames = (e.stack ?? '')
    .split('\n')
    .filter((line) => /^\s+at /.test(line))
    .slice(0, 12)
    .map((line) => line.trim());
  return {
    name: e.name,
    ...(typeof e.code === 'string' || typeof e.code === 'number' ? { code: e.code } : {}),
    ...(cause?.name ? { cause: cause.name } : {}),
    ...(typeof cause?.code === 'string' ? { sqlstate: cause.code } : {}),
    frames,
  };
}

function unexpected(caught: unknown, ctx: Koa.Context, logger: Logger): ApiError {
  const e = (caught ?? {}) as { name?: string; message?: string; stack?: string; code?: unknown; cause?: unknown };
  if (isDependencyOutage(e) || isDependencyOutage((e.cause ?? {}) as typeof e)) {
    logger.debug({ request_id: ctx.state.requestId, err: loggableError(e) }, 'dependency unavailable');
    return errors.unavailable();
  }
  logger.error({ request_id: ctx.state.requestId, err: loggableError(e) }, 'unhandled error');
  return errors.internal();
}
