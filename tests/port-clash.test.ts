// A busy port stops the start with the variable that picks another, not a bare EADDRINUSE.
import { chmodSync, existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
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

describe('a dev server that dies while starting', () => {
  it('is started again, and the reason (the head of its stderr) is logged', async () => {
    // A CLI that panics on its first start, as the dev server does when a port it picked for
    // itself was taken in between, and is the real CLI after that.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gws-flaky-cli-'));
    const marker = path.join(dir, 'panicked');
    const cli = path.join(dir, 'temporal');
    writeFileSync(
      cli,
      `#!/usr/bin/env bash\nif [ ! -e "${marker}" ]; then touch "${marker}"; echo "panic: failed assigning ephemeral port" >&2; exit 2; fi\nexec "${inject('temporalCli')}" "$@"\n`,
    );
    chmodSync(cli, 0o755);
    const warnings: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(line) });
    const server = await startDevServer({ cliPath: cli, namespace: 'default', logger, port: await freePort(), uiPort: await freePort() });
    try {
      expect(existsSync(marker)).toBe(true);
      expect(warnings.join('')).toContain('panic: failed assigning ephemeral port');
    } finally {
      await server.stop();
    }
  });
});
