// The operator commands: `npm run keys` and the Temporal CLI installer script.
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ApiClient } from './support/client.ts';
import { startTestApp, type TestApp } from './support/test-app.ts';

/** Runs `npm run keys -- …` without blocking this process, whose event loop serves the test API. */
function keys(...args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'npm',
      ['run', '--silent', 'keys', '--', ...args],
      { env: { ...process.env, DATABASE_URL: inject('databaseUrl') }, encoding: 'utf8', timeout: 60_000 },
      (err, stdout, stderr) => resolve({ status: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('npm run keys', () => {
  let app: TestApp;
  let api: ApiClient;
  const tenant = `cli-${Date.now()}`;
  beforeAll(async () => {
    app = await startTestApp();
    api = await ApiClient.connect(app.url);
  });
  afterAll(() => app.close());

  it('creates a key once, lists it without its secret, and revokes it', async () => {
    const created = await keys('create', '--tenant', tenant, '--kind', 'core', '--json');
    expect(created.status, created.stderr).toBe(0);
    const key = JSON.parse(created.stdout) as { id: string; key: string; tenant: string; kind: string };
    expect(key).toMatchObject({ tenant, kind: 'core' });
    expect(key.key).toMatch(/^gws_core_/);
    expect((await api.get('/v1/models', { key: key.key })).status).toBe(200);

    const listed = await keys('list', '--tenant', tenant, '--json');
    expect(listed.status).toBe(0);
    expect(listed.stdout).not.toContain(key.key);
    const rows = listed.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows).toEqual([expect.objectContaining({ id: key.id, kind: 'core', revoked_at: null })]);

    const revoked = await keys('revoke', key.id);
    expect(revoked.status).toBe(0);
    expect((await api.get('/v1/models', { key: key.key })).status).toBe(401);
    expect((await keys('revoke', key.id)).status).toBe(1);
  });

  it('creates a workspace key that core routes refuse', async () => {
    const created = await keys('create', '--tenant', tenant, '--kind', 'workspace', '--json');
    const key = JSON.parse(created.stdout) as { key: string };
    expect(key.key).toMatch(/^gws_ws_/);
    expect((await api.get('/v1/models', { key: key.key })).status).toBe(401);
  });

  it('rejects an unknown kind', async () => {
    const bad = await keys('create', '--tenant', tenant, '--kind', 'admin');
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toContain('admin');
  });
});

describe('scripts/ensure-temporal-cli.sh', () => {
  it('prints the CLI and version it uses, idempotently', () => {
    const first = execFileSync('bash', ['scripts/ensure-temporal-cli.sh'], { encoding: 'utf8' });
    const second = execFileSync('bash', ['scripts/ensure-temporal-cli.sh'], { encoding: 'utf8' });
    expect(first).toMatch(/^temporal CLI: \S+ \(temporal version \d+\.\d+\.\d+/);
    expect(second).toBe(first);
  });

  it('honours TEMPORAL_CLI', () => {
    // A copy that only the variable can name: no fallback (PATH, .tools/) would find this path.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gws-cli-var-'));
    const cli = path.join(dir, 'temporal-named-by-variable');
    copyFileSync(inject('temporalCli'), cli);
    chmodSync(cli, 0o755);
    try {
      const out = execFileSync('bash', ['scripts/ensure-temporal-cli.sh', '--path'], { encoding: 'utf8', env: { ...process.env, TEMPORAL_CLI: cli } });
      expect(out.trim()).toBe(cli);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('exits non-zero with the alternatives when no CLI can be had', () => {
    // A copy of the script in an empty project, with a PATH that has no temporal and no python.
    const root = mkdtempSync(path.join(os.tmpdir(), 'gws-cli-'));
    mkdirSync(path.join(root, 'scripts', 'lib'), { recursive: true });
    for (const file of ['ensure-temporal-cli.sh', 'lib/ensure-pip-binary.sh']) copyFileSync(path.join('scripts', file), path.join(root, 'scripts', file));
    const bin = path.join(root, 'bin');
    mkdirSync(bin);
    for (const tool of ['bash', 'dirname', 'head', 'mkdir', 'cat']) {
      symlinkSync(execFileSync('bash', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).trim(), path.join(bin, tool));
    }
    const run = spawnSync(path.join(bin, 'bash'), [path.join(root, 'scripts', 'ensure-temporal-cli.sh')], {
      env: { PATH: bin, HOME: root },
      encoding: 'utf8',
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('OS package manager');
    expect(run.stderr).toContain('official releases');
    expect(run.stderr).toContain('TEMPORAL_ADDRESS');
  });
});
