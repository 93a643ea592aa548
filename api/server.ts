// Listens on a socket and closes gracefully: stop accepting, tell keep-alive
// clients to reconnect elsewhere (`Connection: close` on every response from
// then on, including those in flight), let in-flight requests finish, and drop
// idle connections.
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type Koa from 'koa';
import { type ApiError, errors, toErrorBody } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';

/**
 * What Node's HTTP parser refuses (an oversized header block, a malformed request) never reaches
 * Koa; it is answered here with the contract's error object instead of Node's bare status line.
 */
function answerClientError(err: Error & { code?: string }, socket: Socket): void {
  if (!socket.writable || err.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  answerRaw(socket, err.code === 'HPE_HEADER_OVERFLOW' ? errors.requestHeaderTooLarge() : errors.malformedRequest());
}

/**
 * CONNECT (a tunnel request) never reaches Koa either: Node hands it to the 'connect' event and,
 * with no listener, drops the socket without a word. No route tunnels, so it is a 405.
 */
function answerConnect(_req: http.IncomingMessage, socket: Duplex): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  answerRaw(socket, errors.methodNotAllowed(), 'allow: GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS\r\n');
}

/** The contract's error object written straight to a socket, then the connection closed. */
function answerRaw(socket: Duplex, error: ApiError, extraHeaders = ''): void {
  const requestId = newId('req');
  const body = JSON.stringify(toErrorBody(error, requestId));
  const reason = http.STATUS_CODES[error.status] ?? 'Error';
  socket.end(
    `HTTP/1.1 ${error.status} ${reason}\r\ncontent-type: application/json; charset=utf-8\r\nx-request-id: ${requestId}\r\n${extraHeaders}content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

/** A busy port, said so that the fix is in the message: which variable picks another. */
function portInUse(host: string, port: number): Error {
  return Object.assign(
    new Error(`Port ${port} on ${host} is already in use (another npm start, or another program). Set PORT to a free port, for example PORT=${port + 1}.`),
    { code: 'EADDRINUSE' },
  );
}

export interface RunningServer {
  url: string;
  port: number;
  /**
   * Serves `app` from now on, on the same socket (connections already open included). Start-up
   * listens at once with a small app that answers 503 "starting", and hands over to the full API
   * once the database is ready for it (runtime/startup.ts): a request meanwhile gets an answer, never
   * a refused connection.
   */
  serve(app: Koa): void;
  close(timeoutMs?: number): Promise<void>;
}

export async function listen(app: Koa, host: string, port: number): Promise<RunningServer> {
  let closing = false;
  /**
   * Once the server is closing, a response that has not started says `Connection: close`, so a
   * keep-alive client reconnects elsewhere: those in flight when close() is called and any that
   * arrive on an open connection afterwards. Every response's head goes out through writeHead
   * (Node's implicit header, flushHeaders and streams included), so this costs one check per
   * response and no bookkeeping per request.
   */
  class DrainingResponse extends http.ServerResponse {
    override writeHead(...args: unknown[]): this {
      if (closing && !this.headersSent) this.setHeader('connection', 'close');
      return (super.writeHead as (...a: unknown[]) => this).apply(this, args);
    }
  }
  let handle = app.callback();
  const server = http.createServer({ ServerResponse: DrainingResponse }, (req, res) => handle(req, res));
  server.keepAliveTimeout = 5_000;
  server.on('clientError', answerClientError);
  server.on('connect', answerConnect);
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => reject(err.code === 'EADDRINUSE' ? portInUse(host, port) : err));
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const shownHost = host === '0.0.0.0' || host === '::' ? 'localhost' : host;
  return {
    url: `http://${shownHost}:${address.port}`,
    port: address.port,
    serve(next) {
      handle = next.callback();
    },
    close(timeoutMs = 10_000) {
      closing = true;
      return new Promise((resolve) => {
        const force = setTimeout(() => server.closeAllConnections(), timeoutMs);
        force.unref();
        server.close(() => {
          clearTimeout(force);
          resolve();
        });
        server.closeIdleConnections();
      });
    },
  };
}
