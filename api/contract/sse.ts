// A server-sent event response, written the way chat streams are (api/routes/chat-sse.ts): a
// PassThrough body, `retry:` first, `: keep-alive` comments on a timer, and the work stopped when
// the client goes away or the server shuts down (then the connection closes too, so the server
// drains instead of waiting; EventSource reconnects elsewhere with Last-Event-ID).
import { PassThrough } from 'node:stream';
import type Koa from 'koa';
import type { Logger } from 'pino';
import { loggableError } from '../middleware/error-handler.ts';
import type { RouteResult } from './route.ts';

/** Reconnection delay the streams ask EventSource clients for (the SSE `retry:` field). */
export const RECONNECT_MS = 1_000;
/** How often an open stream checks whether the server is shutting down. */
const SHUTDOWN_CHECK_MS = 250;

/** Writes one frame; ignored once the stream ended. */
export type SseWrite = (text: string) => void;

/** One SSE frame of a JSON payload. */
export const sseFrame = (id: string, event: string, data: unknown) => `id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

/**
 * Answers 200 text/event-stream and runs `produce` until it returns, throws, or `signal` aborts
 * (client gone, server shutting down). A throw ends the stream without its closing event; it is
 * logged content-free under `what`.
 */
export function eventStream(
  ctx: Koa.Context,
  options: {
    keepAliveMs: number;
    what: string;
    logFields?: Record<string, string>;
    onEnd?: () => void;
    /** Asked at each keep-alive: false (the key was revoked) ends the stream, so a revoked key follows nothing. */
    stillAuthorized?: () => Promise<boolean>;
  },
  produce: (write: SseWrite, signal: AbortSignal) => Promise<void>,
): RouteResult {
  const out = new PassThrough();
  out.on('error', () => {}); // written only while open; a destroyed body has nobody to tell
  const write: SseWrite = (text) => {
    if (!out.destroyed && !out.writableEnded) out.write(text);
  };
  const controller = new AbortController();
  const stop = () => controller.abort();
  // A client that goes away (or went away already) stops the work; so does Koa destroying the body.
  ctx.res.once('close', stop);
  out.once('close', stop);
  if (ctx.res.destroyed || ctx.req.socket.destroyed) stop();
  const server = (ctx.req.socket as { server?: { listening?: boolean } }).server;
  let shuttingDown = false;
  const shutdownWatch = setInterval(() => {
    if (server && server.listening === false) {
      shuttingDown = true;
      controller.abort();
    }
  }, SHUTDOWN_CHECK_MS);
  const keepAlive = setInterval(() => {
    write(': keep-alive\n\n');
    options.stillAuthorized?.().then(
      (ok) => {
        if (ok || controller.signal.aborted) return;
        write(': the key was revoked\n\n');
        controller.abort();
      },
      () => {}, // the database is away: the next tick asks again
    );
  }, options.keepAliveMs);
  const logger = ctx.state.logger as Logger | undefined;
  const requestId = ctx.state.requestId as string;

  ctx.req.socket.setNoDelay(true);
  write(`retry: ${RECONNECT_MS}\n\n`);
  void (async () => {
    try {
      await produce(write, controller.signal);
    } catch (err) {
      // The 200 is sent: the stream ends without a closing event, and the client resumes with Last-Event-ID.
      logger?.warn({ request_id: requestId, ...options.logFields, err: loggableError(err as Error) }, `${options.what} interrupted`);
    } finally {
      if (shuttingDown) {
        write(': server shutting down; reconnect with Last-Event-ID\n\n');
        // Headers went out with keep-alive: close the connection too, or the closing server waits for it.
        ctx.res.once('finish', () => ctx.req.socket.end());
      }
      clearInterval(keepAlive);
      clearInterval(shutdownWatch);
      ctx.res.off('close', stop);
      options.onEnd?.();
      out.end();
    }
  })();
  return {
    status: 200,
    body: out,
    headers: {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    },
  };
}
