// The error middleware's opaque 500, the config module's validation, and the
// start-up failure a bad variable causes.
import { spawnSync } from 'node:child_process';
import Koa from 'koa';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { errorHandler } from '../api/middleware/error-handler.ts';
import { requestId } from '../api/middleware/request-id.ts';
import { listen } from '../api/server.ts';
import { ConfigError } from '../config/config-error.ts';
import { loadConfig } from '../config/env.ts';

describe('error handler', () => {
  it('turns an unexpected exception into an opaque 500 that reveals no internals', async () => {
    const app = new Koa();
    app.silent = true;
    app.use(requestId());
    app.use(errorHandler(pino({ level: 'silent' })));
    app.use(() => {
      throw new Error('connect ECONNREFUSED 10.0.0.5:5432 secret-internal-detail');
    });
    const server = await listen(app, '127.0.0.1', 0);
    try {
      const res = await fetch(`${server.url}/anything`, { headers: { 'x-request-id': 'r-500' } });
      expect(res.status).toBe(500);
      const text = await res.text();
      expect(text).not.toContain('ECONNREFUSED');
      expect(text).not.toContain('secret-internal-detail');
      expect(JSON.parse(text)).toEqual({
        error: {
          message: 'The server hit an unexpected error. Retry with bounded backoff.',
          type: 'server_error',
          param: null,
          code: 'internal_error',
          request_id: 'r-500',
        },
      });
    } finally {
      await server.close();
    }
  });
});

describe('configuration', () => {
  it('applies the documented defaults', () => {
    const config = loadConfig({});
    expect(config.http.port).toBe(8080);
    expect(config.temporal).toMatchObject({ external: false, taskQueue: 'governed-workspace', devPort: 7233, uiPort: 8233 });
    expect(config.temporal.connection.namespace).toBe('default');
    expect(config.database.url).toBeUndefined();
    expect(config.logLevel).toBe('info');
  });

  it('names every invalid variable', () => {
    try {
      loadConfig({ PORT: 'eighty', TEMPORAL_ADDRESS: 'http://x', RATE_LIMIT_POINTS: '0', DATABASE_URL: 'mysql://x' });
      expect.unreachable('loadConfig accepted invalid values');
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const names = (err as ConfigError).problems.map((p) => p.split(':')[0]);
      expect(names.sort()).toEqual(['DATABASE_URL', 'PORT', 'RATE_LIMIT_POINTS', 'TEMPORAL_ADDRESS']);
    }
  });

  it('stops start-up with a message naming the variable', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'bin/start.ts'], {
      env: { ...process.env, PORT: 'not-a-port', LOG_LEVEL: 'silent' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('PORT');
    expect(run.stderr).toContain('Invalid configuration');
  });
});
