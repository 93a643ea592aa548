// The API's graceful close over a real socket: requests in flight finish, and
// keep-alive clients are told to reconnect elsewhere (Connection: close).
import http from 'node:http';
import Koa from 'koa';
import { describe, expect, it } from 'vitest';
import { listen } from '../api/server.ts';

function get(url: string, agent: http.Agent): Promise<{ status: number; connection: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent }, (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection, body }));
      })
      .on('error', reject);
  });
}

describe('api/server close', () => {
  it('finishes a request in flight and answers it with Connection: close', async () => {
    // The handler holds each request until the test lets it go, so "in flight" is a state, not a timing.
    let arrived = () => {};
    let release = () => {};
    const app = new Koa();
    app.use(async (ctx) => {
      const held = new Promise<void>((r) => (release = r));
      arrived();
      if (ctx.path === '/slow') await held;
      ctx.body = 'done';
    });
    const server = await listen(app, '127.0.0.1', 0);
    const agent = new http.Agent({ keepAlive: true });
    try {
      const before = await get(server.url, agent);
      expect(before.connection).toBe('keep-alive');
      const inHandler = new Promise<void>((r) => (arrived = r));
      const inFlight = get(`${server.url}/slow`, agent);
      await inHandler;
      const closed = server.close(5_000);
      release();
      const reply = await inFlight;
      expect(reply).toEqual({ status: 200, connection: 'close', body: 'done' });
      await closed;
      await expect(get(server.url, new http.Agent())).rejects.toThrow(/ECONNREFUSED/);
    } finally {
      agent.destroy();
    }
  });
});
