// No Docker engine runs here, so the compose file is checked as data: its
// services, ports and environment must agree with the config module.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { envSchema, loadConfig } from '../config/env.ts';
import { TEMPORAL_CONNECTION_VARIABLES } from '../config/temporal-env.ts';

type Service = {
  image?: string;
  build?: unknown;
  command?: unknown;
  stop_grace_period?: string;
  ports?: string[];
  environment?: Record<string, string>;
  depends_on?: unknown;
};
const compose = parse(readFileSync('temporal-dev.yml', 'utf8')) as { services: Record<string, Service> };
const defaults = loadConfig({});

describe('temporal-dev.yml', () => {
  it('has the production-like stack', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['api', 'postgres', 'temporal', 'temporal-ui', 'worker']);
    expect(compose.services.temporal!.image).toMatch(/^temporalio\/(auto-setup|server)/);
    expect(compose.services['temporal-ui']!.image).toMatch(/^temporalio\/ui/);
    expect(compose.services.postgres!.image).toMatch(/^postgres/);
  });

  it('uses only variables the config module reads, and they parse', () => {
    for (const name of ['api', 'worker'] as const) {
      const env = compose.services[name]!.environment ?? {};
      const read: string[] = [...Object.keys(envSchema.shape), ...TEMPORAL_CONNECTION_VARIABLES];
      for (const key of Object.keys(env)) expect(read, `${name}: ${key}`).toContain(key);
      const config = loadConfig(env);
      expect(config.temporal).toMatchObject({ external: true, connection: { address: 'temporal:7233' } });
      expect(config.database.url).toMatch(/^postgres:\/\/.*@postgres:5432\//);
    }
  });

  it('publishes the ports the config and README name', () => {
    const api = compose.services.api!;
    const apiPort = Number(api.environment?.PORT ?? defaults.http.port);
    expect(api.ports).toContain(`${apiPort}:${apiPort}`);
    expect(compose.services.temporal!.ports).toContain(`${defaults.temporal.devPort}:7233`);
    expect(compose.services['temporal-ui']!.ports).toContain(`${defaults.temporal.uiPort}:8080`);
  });

  it('runs node itself, so SIGTERM reaches it, and waits longer than the shutdown timeout', () => {
    expect(compose.services.api!.command).toEqual(['node', 'dist/bin/api.js']);
    expect(compose.services.worker!.command).toEqual(['node', 'dist/bin/worker.js']);
    for (const name of ['api', 'worker'] as const) {
      expect(Number.parseInt(compose.services[name]!.stop_grace_period!, 10) * 1000).toBeGreaterThan(defaults.shutdownTimeoutMs);
    }
    expect(readFileSync('Dockerfile', 'utf8')).toMatch(/^CMD \["node", "dist\/bin\/api\.js"\]$/m);
  });

  it('gives the api and the worker the same payload key, as production requires', () => {
    const api = loadConfig(compose.services.api!.environment ?? {});
    const worker = loadConfig(compose.services.worker!.environment ?? {});
    expect(api.env).toBe('production');
    expect(api.payload.key?.id).toBe(worker.payload.key?.id);
    expect(api.payload.key?.bytes.equals(worker.payload.key!.bytes)).toBe(true);
  });

  it('points the Temporal server and UI at each other and at Postgres', () => {
    expect(compose.services.temporal!.environment).toMatchObject({ DB: 'postgres12', POSTGRES_SEEDS: 'postgres' });
    expect(compose.services['temporal-ui']!.environment).toMatchObject({ TEMPORAL_ADDRESS: 'temporal:7233' });
  });
});
