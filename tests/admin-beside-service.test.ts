// The admin CLIs on the embedded default: beside a running `npm start` they reach
// its PGlite through the socket it serves in DATA_DIR; with no service they open it
// themselves; pointed at a DATA_DIR without a database they say so and create nothing.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { serveAdminSocket } from '../db/admin-socket.ts';
import { freePort } from './support/free-port.ts';
import { type Started, startNpmStart } from './support/npm-start.ts';
import { until } from './support/until.ts';

const root = mkdtempSync(path.join(os.tmpdir(), 'gws-admin-'));
const dataDir = path.join(root, 'data');
const socketFile = path.join(dataDir, 'admin-socket', '.s.PGSQL.5432');
const lockFile = path.join(dataDir, 'service.pid');
const groups: number[] = [];
const ports = { api: 0, temporal: 0, ui: 0 };
// Each `npm run` starts a TypeScript process: under the full suite's load a dozen of them take minutes.
const TEST_TIMEOUT_MS = 420_000;

function embeddedEnv(dir: string): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.DATABASE_URL;
  delete env.TEMPORAL_ADDRESS;
  return { ...env, DATA_DIR: dir, LOG_LEVEL: 'warn' };
}

/** `npm run <script> -- …` without blocking this process. */
function npmRun(script: string, args: string[], dir = dataDir): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('npm', ['run', '--silent', script, '--', ...args], { env: embeddedEnv(dir), encoding: 'utf8', timeout: 90_000 }, (err, stdout, stderr) =>
      resolve({ status: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

async function npmStart(): Promise<Started> {
  for (let attempt = 1; ; attempt++) {
    ports.api = await freePort();
    ports.temporal = await freePort();
    ports.ui = await freePort();
    try {
      return await npmStartOnce();
    } catch (err) {
      if (attempt >= 3 || !/EADDRINUSE|address already in use/i.test((err as Error).message)) throw err;
    }
  }
}

async function npmStartOnce(): Promise<Started> {
  const env = { ...embeddedEnv(dataDir), PORT: String(ports.api), TEMPORAL_DEV_PORT: String(ports.temporal), TEMPORAL_UI_PORT: String(ports.ui) };
  return startNpmStart(env, groups);
}

function groupMembers(pgid: number): string[] {
  try {
    return execFileSync('ps', ['-o', 'pid=', '-g', String(pgid)], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .filter(Boolean);
  } catch {
    return [];
  }
}

/** Every process whose command line names our data dir (the Temporal dev server's does). */
function processesUsing(dir: string): string[] {
  try {
    return execFileSync('pgrep', ['-f', dir], { encoding: 'utf8' }).trim().split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

async function stop(started: Started, signal: 'SIGINT' | 'SIGKILL'): Promise<string> {
  const pgid = started.child.pid!;
  process.kill(-pgid, signal);
  // A killed service cannot stop the Temporal dev server it started (its own process group), as a crash would not.
  if (signal === 'SIGKILL') for (const pid of processesUsing(dataDir)) process.kill(Number(pid), 'SIGKILL');
  const deadline = Date.now() + 40_000;
  while ((groupMembers(pgid).length > 0 || processesUsing(dataDir).length > 0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
  expect(groupMembers(pgid), 'processes left in the npm start process group').toEqual([]);
  return started.output();
}

const api = (pathname: string, key: string) => fetch(`http://127.0.0.1:${ports.api}${pathname}`, { headers: { authorization: `Bearer ${key}` } });

async function mintKey(tenant: string): Promise<{ id: string; key: string }> {
  const created = await npmRun('keys', ['create', '--tenant', tenant, '--kind', 'core', '--json']);
  expect(created.status, created.stderr).toBe(0);
  const key = JSON.parse(created.stdout) as { id: string; key: string; tenant: string };
  expect(key.tenant).toBe(tenant);
  return key;
}

describe('admin CLIs on the embedded database', () => {
  afterAll(() => {
    for (const pgid of groups) {
      try {
        process.kill(-pgid, 'SIGKILL');
      } catch {} // already gone, as it should be
    }
    for (const pid of processesUsing(dataDir)) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {}
    }
    rmSync(root, { recursive: true, force: true });
  });

  it('refuses a DATA_DIR without a database, naming it, and creates nothing', async () => {
    const missing = path.join(root, 'elsewhere', 'data');
    const empty = mkdtempSync(path.join(root, 'empty-'));
    const relative = `.gws-no-db-${process.pid}`;
    const runs = [
      { dir: missing, abs: missing, script: 'keys', args: ['create', '--tenant', 'x', '--kind', 'core'] },
      { dir: empty, abs: empty, script: 'credits', args: ['grant', '--tenant', 'x', '--amount', '5'] },
      { dir: relative, abs: path.resolve(relative), script: 'tenants', args: ['webhook', 'set', '--tenant', 'x', '--url', 'http://127.0.0.1:9/hook'] },
      { dir: missing, abs: missing, script: 'keys', args: ['list'] },
    ];
    for (const run of runs) {
      const result = await npmRun(run.script, run.args, run.dir);
      expect(result.status, `${run.script} ${run.args.join(' ')}`).toBe(1);
      expect(result.stderr).toContain(`No database in DATA_DIR ${run.abs} (nothing was created)`);
      expect(result.stdout).toBe('');
    }
    expect(existsSync(path.join(root, 'elsewhere'))).toBe(false);
    expect(readdirSync(empty)).toEqual([]);
    expect(existsSync(path.resolve(relative))).toBe(false);
  });

  let startedKey = '';
  let besideKey = '';
  it(
    'keys, credits and tenants work beside a running npm start, against its database',
    async () => {
      const started = await npmStart();
      try {
        startedKey = /core\s+(gws_core_\S+)/.exec(started.output())?.[1] ?? '';
        expect(startedKey).toMatch(/^gws_core_/);
        // The service serves its PGlite on a socket only its user can reach, and says where in its lock file.
        expect(statSync(socketFile).isSocket()).toBe(true);
        expect(statSync(socketFile).mode & 0o777).toBe(0o600);
        expect(statSync(path.dirname(socketFile)).mode & 0o777).toBe(0o700);
        expect(readFileSync(lockFile, 'utf8')).toContain(`socket ${socketFile}`);

        // keys: a key minted beside the service authenticates against it at once.
        besideKey = (await mintKey('beside')).key;
        expect((await api('/v1/models', besideKey)).status).toBe(200);

        // credits: a grant shows in the tenant's usage.
        const before = (await (await api('/v1/usage', besideKey)).json()) as { balance: number };
        const granted = await npmRun('credits', ['grant', '--tenant', 'beside', '--amount', '1234', '--json']);
        expect(granted.status, granted.stderr).toBe(0);
        expect(JSON.parse(granted.stdout)).toMatchObject({ tenant: 'beside', balance: before.balance + 1234 });
        const usage = (await (await api('/v1/usage', besideKey)).json()) as { balance: number; available: number };
        expect(usage.balance).toBe(before.balance + 1234);
        const balance = await npmRun('credits', ['balance', '--tenant', 'beside', '--json']);
        expect(JSON.parse(balance.stdout)).toMatchObject({ balance: usage.balance, available: usage.available });

        // tenants: the webhook fix of docs/operations.md, while the service runs.
        const controlPlane = async () =>
          ((await (await api('/v1/control-plane', besideKey)).json()) as { capabilities: { webhook_delivery: { configured: boolean } } }).capabilities;
        expect((await controlPlane()).webhook_delivery.configured).toBe(false);
        const set = await npmRun('tenants', ['webhook', 'set', '--tenant', 'beside', '--url', 'http://127.0.0.1:9/hooks/runs']);
        expect(set.status, set.stderr).toBe(0);
        expect(set.stdout).toContain('Webhook for "beside" set;');
        expect((await controlPlane()).webhook_delivery.configured).toBe(true);

        // Several commands at once, while the API serves requests: each gets its turn.
        const [a, b, c, ...answers] = await Promise.all([
          npmRun('keys', ['create', '--tenant', 'beside', '--kind', 'workspace', '--json']),
          npmRun('credits', ['grant', '--tenant', 'beside', '--amount', '10', '--json']),
          npmRun('keys', ['list', '--tenant', 'beside', '--json']),
          ...Array.from({ length: 20 }, () => api('/v1/usage', besideKey)),
        ]);
        expect([a!.status, b!.status, c!.status], `${a!.stderr}${b!.stderr}${c!.stderr}`).toEqual([0, 0, 0]);
        expect(answers.map((r) => (r as Response).status)).toEqual(Array(20).fill(200));
        expect(((await (await api('/v1/usage', besideKey)).json()) as { balance: number }).balance).toBe(before.balance + 1244);

        // Revoking beside the service takes effect at once.
        const revoked = await mintKey('beside');
        expect((await api('/v1/models', revoked.key)).status).toBe(200);
        expect((await npmRun('keys', ['revoke', revoked.id])).status).toBe(0);
        expect((await api('/v1/models', revoked.key)).status).toBe(401);

        // db:migrate does not migrate a database another process holds.
        const migrate = await npmRun('db:migrate', []);
        expect(migrate.status).not.toBe(0);
        expect(migrate.stderr).toContain('is in use by process');
      } finally {
        const log = await stop(started, 'SIGINT');
        expect(log).not.toContain('shutdown step failed');
        expect(log).not.toMatch(/admin socket|cannot serve the database/);
      }
      // A clean stop leaves neither the socket nor the lock behind.
      expect(existsSync(socketFile)).toBe(false);
      expect(existsSync(lockFile)).toBe(false);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'opens the database directly when no service runs',
    async () => {
      expect(besideKey).not.toBe('');
      const listed = await npmRun('keys', ['list', '--tenant', 'beside', '--json']);
      expect(listed.status, listed.stderr).toBe(0);
      const rows = listed.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { kind: string; revoked_at: string | null });
      // Minted beside the service: a core key, a workspace key, and a core key revoked since.
      expect(rows.map((r) => [r.kind, r.revoked_at !== null]).sort()).toEqual([
        ['core', false],
        ['core', true],
        ['workspace', false],
      ]);
      const balance = await npmRun('credits', ['balance', '--tenant', 'beside', '--json']);
      expect(balance.status, balance.stderr).toBe(0);
      expect(JSON.parse(balance.stdout).balance).toBeGreaterThanOrEqual(1244);
      expect(existsSync(lockFile)).toBe(false);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a killed service leaves a stale socket and lock that neither the CLIs nor the next start trip over',
    async () => {
      const killed = await npmStart();
      await stop(killed, 'SIGKILL');
      expect(statSync(socketFile).isSocket()).toBe(true); // left behind
      expect(readFileSync(lockFile, 'utf8')).toContain('socket ');

      // A CLI now finds no live owner: it opens the database itself.
      const direct = (await mintKey('after-kill')).key;

      const started = await npmStart();
      try {
        expect(started.output()).toContain('Dev keys were printed when they were created');
        expect((await api('/v1/models', startedKey)).status).toBe(200);
        expect((await api('/v1/models', direct)).status).toBe(200);
        const beside = (await mintKey('after-restart')).key;
        expect((await api('/v1/models', beside)).status).toBe(200);
      } finally {
        expect(await stop(started, 'SIGINT')).not.toContain('shutdown step failed');
      }
      expect(existsSync(socketFile)).toBe(false);
    },
    TEST_TIMEOUT_MS,
  );
});

describe('the admin socket: one PGlite session shared with its process', () => {
  // The one place tests watch for an absence over a short window: the session lock has no state a
  // test could wait on ("a statement is queued behind it"), so "it has not run yet" is observed for 150 ms.
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  async function setUp(maxHoldMs?: number) {
    const db = new PGlite();
    await db.exec('create table t (v text)');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gws-sock-'));
    const errors: string[] = [];
    const server = await serveAdminSocket(db, path.join(dir, 's', '.s.PGSQL.5432'), {
      ...(maxHoldMs ? { maxHoldMs } : {}),
      onError: (e) => errors.push(e.message),
    });
    const connect = async () => {
      const client = new pg.Client({ host: path.join(dir, 's'), port: 5432, user: 'postgres', database: 'postgres' });
      client.on('error', () => {});
      await client.connect();
      return client;
    };
    const rows = async () => (await db.query<{ v: string }>('select v from t order by v')).rows.map((r) => r.v);
    const close = async () => {
      await server.close();
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    };
    return { db, server, connect, rows, errors, close };
  }

  it("keeps a client's transaction and the process's own apart", async () => {
    const s = await setUp();
    try {
      const client = await s.connect();
      // The client's open transaction: the process's statements wait for it, and are not part of it.
      await client.query('begin');
      await client.query("insert into t values ('client')");
      let done = false;
      const own = s.db.query("insert into t values ('process')").then(() => (done = true));
      await sleep(150);
      expect(done).toBe(false);
      await client.query('rollback');
      await own;
      expect(await s.rows()).toEqual(['process']);

      // The process's transaction: the client's statements wait for it, and do not see inside it.
      const tx = s.db.transaction(async (t) => {
        await t.query("insert into t values ('in-tx')");
        await sleep(150);
        await t.rollback();
      });
      await sleep(20);
      expect((await client.query('select count(*)::int as n from t')).rows).toEqual([{ n: 1 }]);
      await tx;

      // A failed statement of the client leaves the process's session usable.
      await expect(client.query('select missing from t')).rejects.toThrow('column "missing" does not exist');
      // Interleaved: the client's statements in turn (one connection), the process's all at once.
      const byClient = (async () => {
        for (let i = 0; i < 20; i++) await client.query('insert into t values ($1)', [`c${i}`]);
      })();
      await Promise.all([byClient, ...Array.from({ length: 20 }, (_, i) => s.db.query('insert into t values ($1)', [`p${i}`]))]);
      expect(await s.rows()).toHaveLength(41);
      await client.end();
      expect(s.errors).toEqual([]);
    } finally {
      await s.close();
    }
  });

  it('rolls back what a vanished client left open, and cuts off one that holds the database too long', async () => {
    const s = await setUp(500);
    try {
      const gone = await s.connect();
      await gone.query('begin');
      await gone.query("insert into t values ('vanished')");
      (gone as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
      // Rolled back when its socket closed: well before the 500 ms hold limit would cut it off.
      await until(() => !s.db.isInTransaction(), "the vanished client's transaction rolled back", { withinMs: 400, everyMs: 10 });
      expect(await s.rows()).toEqual([]);
      expect(s.db.isInTransaction()).toBe(false);

      const slow = await s.connect();
      await slow.query('begin');
      await slow.query("insert into t values ('slow')");
      const started = Date.now();
      await s.db.query("insert into t values ('process')");
      expect(Date.now() - started).toBeGreaterThanOrEqual(400);
      expect(await s.rows()).toEqual(['process']);
      expect(s.errors).toEqual(['admin connection held the database over 500 ms; disconnected']);
      await expect(slow.query('select 1')).rejects.toThrow();
    } finally {
      await s.close();
    }
  });
});
