import type Koa from 'koa';
import type { Logger } from 'pino';
import { ApiError, errors, StartingError, toErrorBody } from '../../domain/errors.ts';
import { isDependencyOutage } from '../../services/dependency-outage.ts';
import type { OutageLog } from '../../services/outage-log.ts';

/**
 * Turns every failure into the contract's error object. ApiErrors carry their
 * own status and code; anything else is logged (without request content) and
 * answered with an opaque 500 that reveals no internals. A 503 (a dependency
 * unreachable) is expected while it lasts: it is logged at debug and counted
 * by the outage log, which logs the outage itself once. A 503 of a process still
 * starting is no outage: it is not counted.
 */
export function errorHandler(logger: Logger, outage?: OutageLog): Koa.Middleware {
  const answer = (ctx: Koa.Context, caught: unknown) => {
    const err = caught instanceof ApiError ? caught : unexpected(caught, ctx, logger);
    if (err.status === 503 && !(err instanceof StartingError)) outage?.refused();
    ctx.status = err.status;
    ctx.set(err.headers);
    ctx.body = toErrorBody(err, ctx.state.requestId as string);
  };
  // Nothing answered: an unknown route (404 or 501) or a known path with another method (405).
  const unanswered = (ctx: Koa.Context) => {
    if (ctx.body != null && ctx.body !== '') return;
    if (ctx.status === 404 || ctx.status === 501) answer(ctx, errors.notFound());
    else if (ctx.status === 405) answer(ctx, errors.methodNotAllowed());
  };
  // Not async: one promise per request (as api/middleware/request-log.ts).
  return function errorHandler(ctx, next) {
    return next().then(
      () => unanswered(ctx),
      (caught: unknown) => answer(ctx, caught),
    );
  };
}

/**
 * What may be logged of an unexpected error: its class, its codes (errno, SQLSTATE, gRPC status) and where it was
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
    // A gRPC status (Temporal's client wraps it in a ServiceError): which failure it was, without its text.
    ...(typeof cause?.code === 'number' ? { grpc_code: cause.code } : {}),
    frames,
  };
}

function unexpected(caught: unknown, ctx: Koa.Context, logger: Logger): ApiError {
  const e = (caught ?? {}) as { name?: string; message?: string; stack?: string; code?: unknown; cause?: unknown };
  // A dependency unreachable (services/dependency-outage.ts): Postgres connection errors, Temporal's gRPC UNAVAILABLE / DEADLINE_EXCEEDED.
  if (isDependencyOutage(e)) {
    logger.debug({ request_id: ctx.state.requestId, err: loggableError(e) }, 'dependency unavailable');
    return errors.unavailable();
  }
  logger.error({ request_id: ctx.state.requestId, err: loggableError(e) }, 'unhandled error');
  return errors.internal();
}
