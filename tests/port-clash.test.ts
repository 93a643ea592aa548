// A busy port stops the start with the variable that picks another, not a bare EADDRINUSE.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { listen } from '../api/server.ts';
import { startDevServer } from '../runtime/temporal-dev-server.ts';
import { freePort } from './support/free-port.ts';

let squatter: http.Server;
let busy: number;
beforeAll(async () => {
  squatter = http.createServer((_req, res) => res.end());
  await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
  busy = (squatter.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => squatter.close(() => resolve())));

describe('a port already in use', () => {
  it('for the API names PORT', async () => {
    await expect(listen(new Koa(), '127.0.0.1', busy)).rejects.toThrow(new RegExp(`Port ${busy} on 127.0.0.1 is already in use.*Set PORT to a free port`));
  });

  it('for the dev server names TEMPORAL_DEV_PORT or TEMPORAL_UI_PORT, and starts nothing', async () => {
    const options = { cliPath: inject('temporalCli'), namespace: 'default', logger: pino({ level: 'silent' }) };
    await expect(startDevServer({ ...options, port: busy, uiPort: await freePort() })).rejects.toThrow(/Set TEMPORAL_DEV_PORT to a free port/);
    await expect(startDevServer({ ...options, port: await freePort(), uiPort: busy })).rejects.toThrow(/Set TEMPORAL_UI_PORT to a free port/);
  });
});
