// `npm run deploy`: the blue-green commands against the real dev server, with two builds of one
// deployment polling (the workers register them): status, ramp, promote and drained. What a promotion does
// to runs (waiting ones move, running ones stay) is the rollout drill's (tests/rollout-drill.test.ts).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openPostgres } from '../db/client.ts';
import type { RunningWorker } from '../runtime/worker.ts';
import { startTestWorker } from './support/run-stack.ts';
import { serviceEnv } from './support/service-env.ts';

const run = promisify(execFile);
const deployment = `deploy-test-${Date.now()}`;
const taskQueue = `deploy-test-${Date.now()}`;
const database = openPostgres(inject('databaseUrl'), 2);
const workers: RunningWorker[] = [];

async function deploy(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'bin/deploy.ts', ...args], {
      env: serviceEnv({ WORKER_DEPLOYMENT_NAME: deployment }),
      timeout: 90_000,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const statusJson = async () => JSON.parse((await deploy('status', '--json')).stdout);
const build = (buildId: string) => ({ versioning: { enabled: true, deploymentName: deployment, buildId } });

beforeAll(async () => {
  // The first build of a deployment becomes current when its worker starts; the second waits beside it.
  workers.push(await startTestWorker(database.db, taskQueue, {}, build('blue')));
  workers.push(await startTestWorker(database.db, taskQueue, {}, build('green')));
});
afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  await database.close();
});

describe('npm run deploy', () => {
  it('status says which build is current, and lists the new one beside it', async () => {
    const status = await statusJson();
    expect(status.current).toBe('blue');
    expect(status.ramping).toBeNull();
    expect(status.builds.map((b: { buildId: string }) => b.buildId).sort()).toEqual(['blue', 'green']);
    const text = (await deploy('status')).stdout;
    expect(text).toMatch(/current\s+blue/);
    expect(text).toMatch(/build green\s+inactive/);
  });

  it('ramp sends a percent to the newest build; promote makes it current; drained then says the old one may stop', async () => {
    expect((await deploy('ramp', '10')).stdout).toContain('ramping green at 10%');
    expect((await statusJson()).ramping).toEqual({ buildId: 'green', percent: 10 });
    expect((await deploy('promote')).stdout).toContain('green is current');
    const status = await statusJson();
    expect(status.current).toBe('green');
    expect(status.ramping).toBeNull();
    const drained = await deploy('drained', '--wait', '40');
    expect(drained.stdout).toContain('drained');
    expect(drained.code).toBe(0);
  });

  it('refuses a bad percent with its usage, exit 2', async () => {
    const bad = await deploy('ramp', '120');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('ramp needs a percent from 0 to 100');
  });
});
