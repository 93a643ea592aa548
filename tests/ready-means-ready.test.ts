// Ready means ready (issue 34, point 4). `npm start` over a Postgres the test
// owns: /health answers 200 only once start-up has finished (migrations, the
// worker, the schedules, the dev keys), so a 60 s outage that begins right at
// that first 200 is an outage of a running service: every request is answered
// (503, never a refused connection), the log stays quiet, and the service is
// back soon after Postgres. A dependency down during start-up is waited out,
// with 503 "starting" meanwhile and one line when it goes and one when it is
// back; past STARTUP_TIMEOUT_MS the process exits 1 naming it (npm start, and
// the production entry points `npm run api` and `npm run worker`).
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from './support/free-port.ts';
import { type Started, spawnNpmStart } from './support/npm-start.ts';
import { type PrivatePostgres, startPrivatePostgres } from './support/private-postgres.ts';
import { serviceEnv } from './support/service-env.ts';
import { until } from './support/until.ts';

/** The outage: Postgres stopped this long, right after the first 200. */
const OUTAGE_MS = 60_000;
const POLL_MS = 250;
const ERROR = 50;

const groups: number[] = [];
const dataDirs: string[] = [];
const clusters: PrivatePostgres[] = [];

afterAll(() => {
  for (const pgid of groups) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {} // gone already, as it should be
  }
  for (const dir of dataDirs) {
    // The Temporal dev server has its own process group; its command line names the data dir.
    try {
      for (const pid of execFileSync('pgrep', ['-f', dir], { encoding: 'utf8' }).trim().split('\n').filter(Boolean)) process.kill(Number(pid), 'SIGKILL');
    } catch {} // none left
    rmSync(dir, { recursive: true, force: true });
  }
  for (const postgres of clusters) postgres.destroy();
});

type Answer = { status: number; message?: string } | { error: string };

/** One request: its status (and error message), or what kept it from being answered at all. */
async function ask(url: string, key?: string): Promise<Answer> {
  try {
    const res = await fetch(url, { headers: key ? { authorization: `Bearer ${key}` } : {}, signal: AbortSignal.timeout(10_000) });
    const body = (await res.json().catch(() => null)) as { error?: { message?: string } } | null;
    return { status: res.status, ...(body?.error?.message ? { message: body.error.message } : {}) };
  } catch (err) {
    const e = err as Error & { cause?: { code?: string } };
    return { error: e.cause?.code ?? e.name };
  }
}
const statusOf = (a: Answer) => ('status' in a ? a.status : undefined);

async function npmStartOver(databaseUrl: string): Promise<{ started: Started; base: string }> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gws-ready-'));
  dataDirs.push(dataDir);
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['TEMPORAL_ADDRESS', 'REDIS_URL', 'NODE_ENV']) delete env[name];
  Object.assign(env, {
    DATABASE_URL: databaseUrl,
    DATA_DIR: dataDir,
    PORT: String(port),
    TEMPORAL_DEV_PORT: String(await freePort()),
    TEMPORAL_UI_PORT: String(await freePort()),
    LOG_LEVEL: 'info',
  });
  return { started: spawnNpmStart(env, groups), base: `http://127.0.0.1:${port}` };
}

/** The pino lines of `text` (other lines are npm's, or the banner). */
function logLines(text: string): { level: number; msg: string; [k: string]: unknown }[] {
  return text.split('\n').flatMap((line) => {
    try {
      const parsed = JSON.parse(line);
      return typeof parsed?.level === 'number' ? [parsed] : [];
    } catch {
      return [];
    }
  });
}

const exitOf = (child: ChildProcess) =>
  child.exitCode !== null ? Promise.resolve(child.exitCode) : new Promise<number | null>((r) => child.once('exit', (code) => r(code)));

/** Ctrl-C to the group; resolves once npm and the service are gone. */
async function stop(started: Started): Promise<void> {
  try {
    process.kill(-started.child.pid!, 'SIGINT');
  } catch {}
  await exitOf(started.child);
}

const coreKeyIn = (out: string) => /core\s+(gws_core_\S+)/.exec(out)?.[1];

/** Waits for the first 200 of /health; if npm start exits or never gets there, the error carries what it printed. */
async function firstOk(started: Started, base: string): Promise<void> {
  const outcome = await until(
    async () => (started.child.exitCode !== null ? 'exited' : statusOf(await ask(`${base}/health`)) === 200 ? 'ok' : null),
    'the first 200 of /health',
    { withinMs: 180_000, everyMs: POLL_MS },
  ).catch((err: Error) => {
    throw new Error(`${err.message}; npm start printed:\n${started.output().slice(-8_000)}`);
  });
  if (outcome === 'exited')
    throw new Error(`npm start exited (${started.child.exitCode}) before its first 200; it printed:\n${started.output().slice(-8_000)}`);
}

describe('npm start over Postgres: ready means ready', () => {
  it('a 60 s outage that starts right at the first 200 of /health gets 503s, at most 20 error lines, and recovery within 30 s', async () => {
    const postgres = await startPrivatePostgres();
    clusters.push(postgres);
    const { started, base } = await npmStartOver(postgres.url);
    try {
      // Polled as a load balancer would: connections refused before the process listens are expected.
      await firstOk(started, base);
      postgres.stop();
      const outageFrom = started.output().length;
      const stoppedAt = Date.now();

      // The key from the banner, which a finished start-up has printed (checked below).
      const key = coreKeyIn(started.output()) ?? `gws_core_${'x'.repeat(43)}`;
      const health: { at: number; answer: Answer }[] = [];
      const runs: Answer[] = [];
      while (Date.now() - stoppedAt < OUTAGE_MS) {
        const tick = Date.now();
        const [h, r] = await Promise.all([ask(`${base}/health`), ask(`${base}/v1/agent-runs`, key)]);
        health.push({ at: tick - stoppedAt, answer: h });
        runs.push(r);
        await new Promise((res) => setTimeout(res, Math.max(0, POLL_MS - (Date.now() - tick))));
      }
      postgres.start();
      const restartedAt = Date.now();
      // Waited for at most 30 s; the checks below say what went wrong, if anything did.
      const recovered = await until(async () => statusOf(await ask(`${base}/health`)) === 200, '/health 200 again after Postgres is back', {
        withinMs: 30_000,
        everyMs: POLL_MS,
      }).then(
        () => true,
        () => false,
      );
      const recoveryMs = Date.now() - restartedAt;
      const runsAfter = await ask(`${base}/v1/agent-runs`, key);

      const out = started.output();
      expect(out, 'the banner came with the first 200').toContain('Press Ctrl-C to stop.');
      expect(coreKeyIn(out)).toBe(key);
      // Every request of the outage was answered: none refused, none left hanging.
      const unanswered = [...health.map((h) => h.answer), ...runs].filter((a) => 'error' in a);
      expect(unanswered, 'requests not answered during the outage').toEqual([]);
      expect(runs.length).toBeGreaterThanOrEqual(OUTAGE_MS / POLL_MS / 2);
      expect(new Set(runs.map(statusOf)), 'GET /v1/agent-runs during the outage').toEqual(new Set([503]));
      // /health reports from a status at most ~1 s old (services/health.ts): 503 from then on.
      expect(new Set(health.filter((h) => h.at > 3_000).map((h) => statusOf(h.answer))), '/health during the outage').toEqual(new Set([503]));
      expect(health.at(-1)!.answer).toMatchObject({ status: 503, message: expect.stringContaining('database') });
      // The outage is a few lines, not one per request (the banner, printed before the first 200, is no part of it).
      const window = out.slice(Math.max(outageFrom, out.indexOf('Press Ctrl-C to stop.')));
      const errorLines = logLines(window).filter((l) => l.level >= ERROR);
      expect(errorLines.length, `error lines:\n${errorLines.map((l) => JSON.stringify(l)).join('\n')}`).toBeLessThanOrEqual(20);
      expect(recovered, '/health answered 200 within 30 s of Postgres being back').toBe(true);
      expect(recoveryMs).toBeLessThanOrEqual(30_000);
      expect(statusOf(runsAfter)).toBe(200);
      expect(started.child.exitCode, `npm start exited:\n${out.slice(-3000)}`).toBeNull();
      expect(out).not.toContain('Start-up failed');
    } finally {
      await stop(started);
    }
  }, 360_000);

  it('with Postgres down at start it answers 503 "starting" and waits, logs it once, and is ready once Postgres is back', async () => {
    const postgres = await startPrivatePostgres();
    clusters.push(postgres);
    postgres.stop();
    const { started, base } = await npmStartOver(postgres.url);
    try {
      const waiting = 'starting (migrating the database: waiting for the database)';
      // Twenty answers in a row (~5 s: start-up retries several times meanwhile), each one the 503 "starting".
      await until(async () => ((await ask(`${base}/health`)) as { message?: string }).message?.includes(waiting), 'a 503 "starting" from /health', {
        withinMs: 120_000,
        everyMs: POLL_MS,
      });
      for (let i = 0; i < 20; i++) {
        expect(await ask(`${base}/health`)).toMatchObject({ status: 503, message: `Service unavailable: ${waiting}.` });
        expect(await ask(`${base}/v1/agent-runs`, `gws_core_${'x'.repeat(43)}`)).toMatchObject({ status: 503, message: expect.stringContaining(waiting) });
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
      expect(started.child.exitCode).toBeNull();

      postgres.start();
      await until(async () => statusOf(await ask(`${base}/health`)) === 200, '/health 200 once Postgres is back', { withinMs: 180_000, everyMs: POLL_MS });
      const out = started.output();
      const key = coreKeyIn(out);
      expect(key, 'the dev keys were printed').toBeDefined();
      expect(statusOf(await ask(`${base}/v1/agent-runs`, key))).toBe(200);
      const lines = logLines(out);
      expect(lines.filter((l) => l.msg === 'dependency unavailable during start-up: waiting for it').map((l) => [l.dependency, l.step])).toEqual([
        ['the database', 'migrating the database'],
      ]);
      expect(lines.filter((l) => l.msg === 'dependency back: start-up goes on').map((l) => l.dependency)).toEqual(['the database']);
      expect(lines.filter((l) => l.level >= ERROR)).toEqual([]);
    } finally {
      await stop(started);
    }
  }, 360_000);
});

describe('the production entry points wait for their dependencies, within STARTUP_TIMEOUT_MS', () => {
  /** `bin/<entry>.ts` with the test run's services and `extra`; resolves with its exit code and output. */
  function run(entry: 'api' | 'worker', extra: Record<string, string>) {
    const child = spawn(process.execPath, ['--import', 'tsx', `bin/${entry}.ts`], { env: serviceEnv(extra), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (out += d));
    return { child, output: () => out, exit: exitOf(child) };
  }

  it('npm run api answers 503 "starting" while the database is unreachable, then exits 1 naming it', { timeout: 90_000 }, async () => {
    const port = await freePort();
    const api = run('api', { PORT: String(port), DATABASE_URL: `postgres://postgres@127.0.0.1:${await freePort()}/none`, STARTUP_TIMEOUT_MS: '6000' });
    try {
      const answer = await until(
        async () => {
          const a = await ask(`http://127.0.0.1:${port}/health`);
          return 'status' in a ? a : null;
        },
        'an answer from /health',
        { withinMs: 60_000, everyMs: 100 },
      );
      expect(answer).toMatchObject({ status: 503, message: 'Service unavailable: starting (migrating the database: waiting for the database).' });
      expect(await api.exit).toBe(1);
      expect(api.output()).toContain('the database (DATABASE_URL) stayed unreachable');
      expect(logLines(api.output()).filter((l) => l.msg === 'dependency unavailable during start-up: waiting for it')).toHaveLength(1);
    } finally {
      api.child.kill('SIGKILL');
    }
  });

  it.each([
    ['the database', { DATABASE_URL: 'unreachable' }, 'the database (DATABASE_URL) stayed unreachable'],
    ['Temporal', { TEMPORAL_ADDRESS: 'unreachable' }, 'Temporal (TEMPORAL_ADDRESS) stayed unreachable'],
  ] as const)('npm run worker waits for %s, then exits 1 naming it', { timeout: 90_000 }, async (_name, which, message) => {
    const deadPort = await freePort();
    const extra: Record<string, string> = { STARTUP_TIMEOUT_MS: '4000', TASK_QUEUE: `ready-${process.pid}-${deadPort}` };
    if ('DATABASE_URL' in which) extra.DATABASE_URL = `postgres://postgres@127.0.0.1:${deadPort}/none`;
    if ('TEMPORAL_ADDRESS' in which) extra.TEMPORAL_ADDRESS = `127.0.0.1:${deadPort}`;
    const worker = run('worker', extra);
    try {
      expect(await worker.exit).toBe(1);
      expect(worker.output()).toContain(message);
      expect(logLines(worker.output()).filter((l) => l.msg === 'dependency unavailable during start-up: waiting for it')).toHaveLength(1);
    } finally {
      worker.child.kill('SIGKILL');
    }
  });
});
