// Listens on a socket and closes gracefully: stop accepting, tell keep-alive
// clients to reconnect elsewhere (`Connection: close` on every response from
// then on, including those in flight), let in-flight requests finish, and drop
// idle connections.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';

export interface RunningServer {
  url: string;
  port: number;
  close(timeoutMs?: number): Promise<void>;
}

export async function listen(app: Koa, host: string, port: number): Promise<RunningServer> {
  const server = http.createServer(app.callback());
  server.keepAliveTimeout = 5_000;
  let closing = false;
  const inFlight = new Set<http.ServerResponse>();
  server.on('request', (_req, res: http.ServerResponse) => {
    if (closing) res.setHeader('connection', 'close');
    inFlight.add(res);
    res.once('close', () => inFlight.delete(res));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const shownHost = host === '0.0.0.0' || host === '::' ? 'localhost' : host;
  return {
    url: `http://${shownHost}:${address.port}`,
    port: address.port,
    close(timeoutMs = 10_000) {
      closing = true;
      for (const res of inFlight) if (!res.headersSent) res.setHeader('connection', 'close');
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
