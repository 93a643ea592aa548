// Bench processes: the Temporal dev server, a fresh Postgres database, the API
// under test (as `npm run api` runs it, NODE_ENV=production), the anchor
// servers, and one-shot children that print one JSON line (load, raw starts).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ChildProcess, spawn } from 'node:child_process';
import net from 'node:net';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { projectRoot } from '../../config/paths.ts';
import { withoutUserTemporalSettings } from '../../config/temporal-env.ts';
import { resolveTemporalCli, startDevServer, type DevServer } from '../../runtime/temporal-dev-server.ts';
import { freePort } from '../../tests/support/free-port.ts';
import { type Cores, spawnArgs } from './cores.ts';

export const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
/** The API's pool size; the pg anchor uses the same. */
export const POOL_SIZE = 10;
const tsx = ['--import', 'tsx'];

/** BENCH_PROFILE_DIR: the API and anchor servers write V8 CPU profiles to <dir>/<name>/ when they exit. */
function profiling(name: string): string[] {
  const dir = process.env.BENCH_PROFILE_DIR;
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(dir, name)}`] : [];
}

export function startTemporal(): Promise<DevServer> {
  return (async () =>
    startDevServer({
      cliPath: await resolveTemporalCli(process.env.TEMPORAL_CLI),
      port: await freePort(),
      uiPort: await freePort(),
      namespace: 'default',
      logger: pino({ level: 'silent' }),
    }))();
}

export interface BenchDatabase {
  url: string;
  drop(): Promise<void>;
}

/** A fresh database (gws_bench_<random>) on `adminUrl`'s server (the bench's own cluster, or ADMIN_URL's), dropped by drop(). */
export async function createDatabase(adminUrl = ADMIN_URL): Promise<BenchDatabase> {
  const name = `gws_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const a = new pg.Client({ connectionString: adminUrl });
      await a.connect();
      await a.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await a.end();
    },
  };
}

export interface Server {
  name: string;
  url: string;
  /** Its process (row 11 reads its CPU time). */
  pid?: number;
  stop(): Promise<void>;
}

const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});

async function stopChild(child: ChildProcess): Promise<void> {
  children.delete(child);
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await gone;
  clearTimeout(killer);
}

/** Spawns a long-lived HTTP server child and waits until `readyPath` answers 200. */
async function startServer(name: string, args: string[], env: NodeJS.ProcessEnv, port: number, readyPath: string): Promise<Server> {
  const stderr: string[] = [];
  const child = spawn(...spawnArgs('under-test', process.execPath, args), { cwd: projectRoot, env, stdio: ['ignore', 'ignore', 'pipe'] });
  children.add(child);
  child.stderr!.setEncoding('utf8').on('data', (s: string) => {
    stderr.push(s);
    if (stderr.length > 50) stderr.shift();
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited during start-up:\n${stderr.join('')}`);
    try {
      const res = await fetch(url + readyPath);
      await res.arrayBuffer();
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stopChild(child);
      throw new Error(`${name} did not become ready at ${url}${readyPath}:\n${stderr.join('')}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { name, url, pid: child.pid, stop: () => stopChild(child) };
}

/**
 * Spawns a long-lived child that serves no HTTP (a Temporal worker) and waits until a line of its
 * stdout passes `ready` (its "worker running" log line).
 */
export async function startLoggingChild(name: string, args: string[], env: NodeJS.ProcessEnv, ready: (line: string) => boolean): Promise<Server> {
  const output: string[] = [];
  const child = spawn(...spawnArgs('under-test', process.execPath, [...profiling(name), ...tsx, ...args]), {
    cwd: projectRoot,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  const keep = (s: string) => {
    output.push(s);
    if (output.length > 50) output.shift();
  };
  child.stderr!.setEncoding('utf8').on('data', keep);
  const started = new Promise<void>((resolve, reject) => {
    let pending = '';
    child.stdout!.setEncoding('utf8').on('data', (s: string) => {
      keep(s);
      pending += s;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      if (lines.some(ready)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`${name} exited ${code} during start-up:\n${output.join('')}`)));
  });
  const timeout = setTimeout(() => child.kill('SIGTERM'), 120_000);
  try {
    await started;
  } finally {
    clearTimeout(timeout);
  }
  return { name, url: '', pid: child.pid, stop: () => stopChild(child) };
}

export interface ApiSettings {
  databaseUrl: string;
  temporalAddress: string;
  payloadKey: string;
  taskQueue: string;
  /** A name for its log lines and profile, when several APIs run. */
  name?: string;
  /** More environment (the traced API's OTEL_* settings). */
  env?: Record<string, string>;
}

/**
 * An OTLP/HTTP receiver that accepts and drops every export: what a traced API sends its spans to,
 * so the bench measures the service's side of tracing, not a collector's.
 */
export async function startDiscardingCollector(): Promise<{ url: string; stop(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: () => new Promise((r) => server.close(() => r())),
  };
}

/** BENCH_REDIS_URL (empty: none), else redis://127.0.0.1:6379 when something listens there. */
async function redisUrl(): Promise<string | undefined> {
  if (process.env.BENCH_REDIS_URL !== undefined) return process.env.BENCH_REDIS_URL || undefined;
  const listening = await new Promise<boolean>((resolve) => {
    const socket = net.connect(6379, '127.0.0.1', () => {
      socket.end();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
  return listening ? 'redis://127.0.0.1:6379' : undefined;
}

/** What every service process of the bench gets: the bench's Postgres, Temporal, key and queue, on `port`. */
export function benchServiceEnv(s: ApiSettings, port: number): NodeJS.ProcessEnv {
  return {
    ...withoutUserTemporalSettings({ PATH: process.env.PATH, HOME: process.env.HOME }),
    HOST: '127.0.0.1',
    PORT: String(port),
    DATABASE_URL: s.databaseUrl,
    DATABASE_POOL_SIZE: String(POOL_SIZE),
    MIGRATE_ON_START: 'false',
    TEMPORAL_ADDRESS: s.temporalAddress,
    TASK_QUEUE: s.taskQueue,
    PAYLOAD_KEY: s.payloadKey,
    // The per-key limit would otherwise answer 429 under load: the bench measures the work, not the limit.
    RATE_LIMIT_POINTS: '1000000000',
  };
}

/** The API under test: bin/api.ts in its own node process, production settings, request logs to /dev/null. */
export async function startApi(s: ApiSettings): Promise<Server> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...benchServiceEnv(s, port),
    NODE_ENV: 'production',
    // Shared rate limits on Redis, the production setup for replicas (docs/operations.md), when one answers.
    ...((await redisUrl()) ? { REDIS_URL: await redisUrl(), REDIS_KEY_PREFIX: `gws-bench-${port}:` } : {}),
    // Production serves metrics on 9464 by default: each API of the bench gets a port of its own.
    METRICS_PORT: process.env.BENCH_METRICS === '0' ? '0' : String(await freePort()),
    ...s.env,
  };
  return startServer(s.name ?? 'api', [...profiling('api'), ...tsx, path.join(projectRoot, 'bin', 'api.ts')], env, port, '/health');
}

/**
 * `npm start` as a user runs it (bin/start.ts: API and worker in one process, NODE_ENV unset, no
 * METRICS_PORT), over the bench's Postgres and Temporal, its worker on a task queue of its own.
 */
export async function startNpmStart(s: ApiSettings & { dataDir: string }): Promise<Server> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...benchServiceEnv(s, port), DATA_DIR: s.dataDir, ...s.env };
  return startServer(s.name ?? 'npm-start', [...profiling('npm-start'), ...tsx, path.join(projectRoot, 'bin', 'start.ts')], env, port, '/health');
}

/** An anchor server (scripts/bench/anchors.ts `mode`). */
export async function startAnchorServer(mode: 'hello' | 'pg', databaseUrl: string): Promise<Server> {
  const port = await freePort();
  const env = {
    ...withoutUserTemporalSettings({ PATH: process.env.PATH, HOME: process.env.HOME }),
    NODE_ENV: 'production',
    BENCH_PORT: String(port),
    DATABASE_URL: databaseUrl,
    POOL_SIZE: String(POOL_SIZE),
  };
  return startServer(
    `anchor-${mode}`,
    [...profiling(`anchor-${mode}`), ...tsx, path.join(projectRoot, 'scripts', 'bench', 'anchors.ts'), mode],
    env,
    port,
    '/ready',
  );
}

/**
 * Runs `script` (under scripts/bench) with `leading` arguments then one JSON argument, on `cores`;
 * resolves to the JSON it prints last on stdout.
 */
export function runJsonChild<T>(script: string, arg: unknown, env: NodeJS.ProcessEnv = {}, leading: string[] = [], cores: Cores = 'all'): Promise<T> {
  // A script that takes flags (leading) and no JSON argument gets none.
  const json = arg === undefined ? [] : [JSON.stringify(arg)];
  return new Promise((resolve, reject) => {
    const child = spawn(...spawnArgs(cores, process.execPath, [...tsx, path.join(projectRoot, 'scripts', 'bench', script), ...leading, ...json]), {
      cwd: projectRoot,
      env: { ...withoutUserTemporalSettings(process.env), NODE_ENV: 'production', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(child);
    let out = '';
    let err = '';
    child.stdout!.setEncoding('utf8').on('data', (s: string) => (out += s));
    child.stderr!.setEncoding('utf8').on('data', (s: string) => (err += s));
    child.once('exit', (code) => {
      children.delete(child);
      const last = out.trim().split('\n').at(-1) ?? '';
      if (code !== 0) return reject(new Error(`${script} exited ${code}:\n${err.slice(-2000)}`));
      try {
        resolve(JSON.parse(last) as T);
      } catch {
        reject(new Error(`${script} printed no JSON:\n${out.slice(-1000)}\n${err.slice(-1000)}`));
      }
    });
  });
}

export interface LoadGenerator {
  measure<T>(args: unknown): Promise<T>;
  stop(): Promise<void>;
}

/** The load generator (scripts/bench/load.ts) as one long-lived child answering measurements over IPC. */
export function startLoadGenerator(): LoadGenerator {
  const child = spawn(process.execPath, [...tsx, path.join(projectRoot, 'scripts', 'bench', 'load.ts')], {
    cwd: projectRoot,
    env: { ...process.env, NODE_ENV: 'production' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  children.add(child);
  let next = 0;
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  child.on('message', (m: { id: number; result?: unknown; error?: string }) => {
    const w = waiting.get(m.id);
    waiting.delete(m.id);
    if (m.error !== undefined) w?.reject(new Error(`load generator: ${m.error}`));
    else w?.resolve(m.result);
  });
  child.once('exit', (code) => {
    for (const w of waiting.values()) w.reject(new Error(`load generator exited ${code}`));
    waiting.clear();
  });
  return {
    measure<T>(args: unknown) {
      const id = next++;
      return new Promise<T>((resolve, reject) => {
        waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
        child.send({ id, args });
      });
    },
    async stop() {
      if (child.connected) child.disconnect();
      await stopChild(child);
    },
  };
}
