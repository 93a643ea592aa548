// The production split the drill runs against, in a scratch folder: its own Postgres
// cluster, its own Temporal dev server (SQLite file, so workflows survive its restarts),
// N API replicas and M workers as child processes of this one. Every child is tracked,
// its log lines counted by level and time, and stopped (then checked gone) at the end.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { bundleServiceWorkflows } from '../../runtime/workflow-bundle.ts';
import { pino } from 'pino';
import { openPostgres } from '../../db/client.ts';
import { loadConfig } from '../../config/env.ts';
import { projectRoot } from '../../config/paths.ts';
import type { TemporalConnectionSettings } from '../../config/temporal-connection-settings.ts';
import { withoutUserTemporalSettings } from '../../config/temporal-env.ts';
import { type DevServer, resolveTemporalCli, startDevServer } from '../../runtime/temporal-dev-server.ts';
import { freePort } from '../../tests/support/free-port.ts';
import { type PrivatePostgres, startPrivatePostgres } from '../../tests/support/private-postgres.ts';

export const TASK_QUEUE = 'drill';
const ORPHAN_GUARD = path.join(projectRoot, 'scripts', 'drill', 'orphan-guard.mjs');

/** One error-level (or worse) log line of a service: when, and from which process. */
export interface ErrorLine {
  at: number;
  service: string;
}

export interface Service {
  name: string;
  kind: 'api' | 'worker';
  /** The API's base URL (APIs only). */
  url?: string;
  /** Its own environment on top of the cluster's (a worker's build, say), kept for restarts. */
  env: Record<string, string>;
  child: ChildProcess;
  exited: Promise<void>;
}

export class Cluster {
  readonly errorLines: ErrorLine[] = [];
  readonly services = new Map<string, Service>();
  /** Every pid this drill started, so that the end can show none is left. */
  readonly pids = new Set<number>();
  private temporal?: DevServer;
  private temporalPorts!: { port: number; uiPort: number };
  private cliPath!: string;
  private apiPorts = new Map<string, number>();
  private temporalArgs: string[] = [];

  private constructor(
    readonly scratch: string,
    readonly postgres: PrivatePostgres,
    readonly payloadKey: string,
    readonly bundlePath: string,
  ) {}

  static async start(options: { apis: number; workers: number; workerEnv?: Record<string, string>; temporalArgs?: string[] }): Promise<Cluster> {
    const scratch = mkdtempSync(path.join(os.tmpdir(), 'gws-drill-'));
    chmodSync(scratch, 0o755); // the postgres user (when run as root) must reach its cluster inside
    const postgres = await startPrivatePostgres(scratch);
    const database = openPostgres(postgres.url);
    await database.migrate();
    await database.close();
    const bundlePath = path.join(scratch, 'workflow-bundle.js');
    const code = await bundleServiceWorkflows();
    writeFileSync(bundlePath, code);
    const cluster = new Cluster(scratch, postgres, randomBytes(32).toString('base64'), bundlePath);
    cluster.cliPath = await resolveTemporalCli(process.env.TEMPORAL_CLI);
    cluster.temporalPorts = { port: await freePort(), uiPort: await freePort() };
    cluster.temporalArgs = options.temporalArgs ?? [];
    await cluster.startTemporal();
    for (let i = 1; i <= options.apis; i++) {
      const name = `api-${i}`;
      cluster.apiPorts.set(name, await freePort());
      cluster.spawnService(name, 'api');
    }
    for (let i = 1; i <= options.workers; i++) cluster.spawnService(`worker-${i}`, 'worker', options.workerEnv);
    await Promise.all(cluster.apiUrls().map((url) => waitForHealth(url, 90_000)));
    return cluster;
  }

  get temporalAddress(): string {
    return `127.0.0.1:${this.temporalPorts.port}`;
  }

  /** How the services connect to Temporal, resolved from their environment as they resolve it: the drill's own clients use it too. */
  get temporalConnection(): TemporalConnectionSettings {
    return loadConfig(this.serviceEnv()).temporal.connection;
  }

  apiUrls(): string[] {
    return [...this.apiPorts.values()].map((port) => `http://127.0.0.1:${port}`);
  }

  /** The environment every service gets: the drill's database, Temporal and key; short leases so sweeps converge. */
  serviceEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    return {
      // The drill's own dev server only: no TEMPORAL_* variable or temporal.toml of the operator's may add TLS or an API key.
      ...withoutUserTemporalSettings({ PATH: process.env.PATH, HOME: process.env.HOME }),
      NODE_ENV: 'development', // loopback webhook receivers are accepted outside production only
      LOG_LEVEL: 'warn',
      HOST: '127.0.0.1',
      DATA_DIR: path.join(this.scratch, 'data'),
      DATABASE_URL: this.postgres.url,
      MIGRATE_ON_START: 'false',
      TEMPORAL_ADDRESS: this.temporalAddress,
      TASK_QUEUE,
      WORKFLOW_BUNDLE_PATH: this.bundlePath,
      PAYLOAD_KEY: this.payloadKey,
      PAYLOAD_KEY_ID: 'drill',
      RATE_LIMIT_POINTS: '1000000',
      INSTANCE_LEASE_MS: '4000',
      HOLD_SWEEP_INTERVAL_MS: '3000',
      RECONCILE_GRACE_SECONDS: '5',
      RECONCILE_INTERVAL_SECONDS: '5',
      WEBHOOK_TIMEOUT_MS: '5000',
      ...extra,
    };
  }

  /** Starts (or restarts) a service under its name, with `own` on top of the cluster's environment. */
  spawnService(name: string, kind: 'api' | 'worker', own: Record<string, string> = {}): Service {
    const env = this.serviceEnv({ ...own, ...(kind === 'api' ? { PORT: String(this.apiPorts.get(name)) } : {}) });
    const child = spawn(process.execPath, ['--import', 'tsx', '--import', ORPHAN_GUARD, path.join('bin', `${kind}.ts`)], {
      cwd: projectRoot,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (child.pid) this.pids.add(child.pid);
    for (const stream of [child.stdout!, child.stderr!]) {
      createInterface({ input: stream }).on('line', (line) => this.countLine(name, line));
    }
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const service: Service = { name, kind, child, exited, env: own, url: kind === 'api' ? `http://127.0.0.1:${this.apiPorts.get(name)}` : undefined };
    this.services.set(name, service);
    return service;
  }

  /**
   * Counts error-level lines: pino's JSON (level 50 error, 60 fatal), the Temporal core SDK's own
   * lines on stderr (`<time> ERROR …`; its WARN lines are not errors), and any other non-empty text
   * (a stack trace). DRILL_LOG_DIR keeps every line, per service.
   */
  private countLine(service: string, line: string): void {
    if (process.env.DRILL_LOG_DIR) appendFileSync(path.join(process.env.DRILL_LOG_DIR, `${service}.log`), `${line}\n`);
    if (lineLevel(line) >= 50) this.errorLines.push({ at: Date.now(), service });
  }

  /** Stops one service as an operator would (SIGTERM), and waits for its exit. */
  async stopService(name: string): Promise<void> {
    const service = this.services.get(name)!;
    if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill('SIGTERM');
    await service.exited;
  }

  /** Another workflow bundle in the scratch folder: the workflows with `interceptorModules` bundled in (another build). */
  async buildBundle(name: string, interceptorModules: string[]): Promise<string> {
    const bundlePath = path.join(this.scratch, `${name}.js`);
    const code = await bundleServiceWorkflows({ workflowInterceptorModules: interceptorModules });
    writeFileSync(bundlePath, code);
    return bundlePath;
  }

  /** Sends `signal`, waits for the exit, and starts the service again. */
  async restart(name: string, signal: NodeJS.Signals, pauseMs = 0): Promise<void> {
    const service = this.services.get(name)!;
    service.child.kill(signal);
    await service.exited;
    if (pauseMs) await sleep(pauseMs);
    this.spawnService(name, service.kind, service.env);
    if (service.kind === 'api') await waitForHealth(service.url!, 90_000, true);
  }

  async startTemporal(): Promise<void> {
    this.temporal = await startDevServer({
      cliPath: this.cliPath,
      ...this.temporalPorts,
      dbFile: path.join(this.scratch, 'temporal.db'),
      pidFile: path.join(this.scratch, 'temporal-dev.pid'),
      extraArgs: this.temporalArgs,
      namespace: 'default',
      logger: pino({ level: 'silent' }),
    });
    this.pids.add(this.temporal.pid);
  }

  async stopTemporal(): Promise<void> {
    await this.temporal?.stop();
    this.temporal = undefined;
  }

  /** Stops every service (SIGTERM, then SIGKILL after 20 s), Temporal and Postgres, and removes the scratch folder. */
  async stop(): Promise<void> {
    await Promise.all(
      [...this.services.values()].map(async (s) => {
        if (s.child.exitCode !== null || s.child.signalCode !== null) return;
        s.child.kill('SIGTERM');
        const killer = setTimeout(() => s.child.kill('SIGKILL'), 20_000);
        await s.exited;
        clearTimeout(killer);
      }),
    );
    await this.stopTemporal().catch(() => {});
    this.postgres.destroy();
    rmSync(this.scratch, { recursive: true, force: true });
  }

  /** Processes this drill started that still run (none, after stop()). */
  leftBehind(): number[] {
    const alive = [...this.pids].filter((pid) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    });
    return this.postgres.running() ? [...alive, -1] : alive;
  }

  /** Stops what still runs, at once: for an interrupted drill. */
  killAll(): void {
    for (const s of this.services.values()) s.child.kill('SIGKILL');
    if (this.temporal) process.kill(this.temporal.pid, 'SIGKILL');
    try {
      this.postgres.destroy();
    } catch {}
    rmSync(this.scratch, { recursive: true, force: true });
  }
}

const CORE_LEVELS: Record<string, number> = { TRACE: 10, DEBUG: 20, INFO: 30, WARN: 40, ERROR: 50 };

/** The pino level of a log line; a line of neither format counts as an error (50). */
export function lineLevel(line: string): number {
  if (!line.trim()) return 0;
  try {
    return (JSON.parse(line) as { level?: number }).level ?? 0;
  } catch {
    const core = /^\S+\s+(TRACE|DEBUG|INFO|WARN|ERROR)\s/.exec(line.replace(/\x1b\[[0-9;]*m/g, ''));
    return core ? CORE_LEVELS[core[1]!]! : 50;
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Waits for /health to answer 200 (or, with `anyAnswer`, any HTTP answer: a dependency may be down on purpose). */
export async function waitForHealth(url: string, timeoutMs: number, anyAnswer = false): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2_000) });
      await res.body?.cancel();
      if (res.status === 200 || anyAnswer) return;
    } catch {}
    if (Date.now() > deadline) throw new Error(`${url} did not become healthy within ${timeoutMs} ms`);
    await sleep(200);
  }
}
