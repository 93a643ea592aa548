// Temporal Core's own log lines (the Rust core under the worker) reach the service's logger as JSON
// lines at their own level, not raw text on stderr: `npm start`, then its Temporal dev server is
// killed, and the worker's polls fail in Core.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from './support/free-port.ts';
import { startNpmStart } from './support/npm-start.ts';
import { until } from './support/until.ts';

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gws-core-logs-'));
const groups: number[] = [];
afterAll(() => {
  for (const pgid of groups) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {} // already gone
  }
  try {
    execFileSync('pkill', ['-9', '-f', dataDir]);
  } catch {} // nothing left
  rmSync(dataDir, { recursive: true, force: true });
});

describe("Temporal Core's log lines", () => {
  it('go through the service logger as JSON at their level', { timeout: 180_000 }, async () => {
    const [api, temporal, ui] = [await freePort(), await freePort(), await freePort()];
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, PORT: String(api), TEMPORAL_DEV_PORT: String(temporal), TEMPORAL_UI_PORT: String(ui) };
    for (const name of ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'TOOL_SERVERS_FILE']) delete env[name];
    env.LOG_LEVEL = 'warn';
    const started = await startNpmStart(env, groups);
    const devServer = execFileSync('pgrep', ['-f', `start-dev.*${temporal}`], { encoding: 'utf8' })
      .trim()
      .split('\n')[0]!;
    const before = started.output().length;
    process.kill(Number(devServer), 'SIGKILL');
    const coreLine = () =>
      started
        .output()
        .slice(before)
        .split('\n')
        .find((l) => l.includes('temporalio_client'));
    await until(() => coreLine() !== undefined, 'a log line from Temporal Core', { withinMs: 60_000 });
    const line = JSON.parse(coreLine()!) as { level: number; name: string; temporal: { sdkComponent: string } };
    expect(line).toMatchObject({ level: 40, name: 'gws', temporal: { sdkComponent: 'core' } });
    // Every line that mentions Core is one of the service's JSON lines.
    for (const l of started
      .output()
      .split('\n')
      .filter((x) => x.includes('temporalio_')))
      expect(() => JSON.parse(l), l).not.toThrow();
  });
});
