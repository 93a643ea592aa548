// The service the eval judges, as a user starts it: `npm start` on its defaults (the embedded model,
// PGlite in a scratch DATA_DIR, its own Temporal dev server), with the filesystem MCP server plugged
// in as the README shows or with every tool offered (scripts/eval/catalog.ts), the dev tenant's
// webhook set by the tenants CLI, and `gws listen` receiving and checking the deliveries.
// Everything runs in process groups this file stops.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { projectRoot } from '../../config/paths.ts';
import { freePort } from '../../tests/support/free-port.ts';
import { type Started, startNpmStart } from '../../tests/support/npm-start.ts';
import { type Catalog, toolServersFile } from './catalog.ts';

const run = promisify(execFile);

/** One delivery `gws listen --json` printed. */
export interface Delivery {
  path: string;
  status: number;
  signature: string;
  body: { run_id?: string; message?: unknown; answers?: unknown; [k: string]: unknown } | null;
}

export interface EvalService {
  base: string;
  /** The dev tenant's core key, as npm start printed it: creates and reads runs. */
  key: string;
  /** The dev tenant's approver key, as npm start printed it: decides approvals (a core key cannot). */
  approverKey: string;
  /** The folder the filesystem server works in (DIR in the cases). */
  dir: string;
  deliveries: Delivery[];
  /** Seconds npm start took to print its banner. */
  startSeconds: number;
  stop(): Promise<void>;
}

const filesystemServer = path.join(projectRoot, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js');

function killGroup(child: ChildProcess | undefined, signal: NodeJS.Signals): void {
  if (!child?.pid) return;
  try {
    process.kill(-child.pid, signal);
  } catch {} // already gone
}

async function exited(child: ChildProcess, withinMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await Promise.race([new Promise((r) => child.once('exit', r)), new Promise((r) => setTimeout(r, withinMs))]);
}

/** `gws listen --json` on a free port, its deliveries collected as they are printed. */
async function listen(port: number, secret: string, deliveries: Delivery[]): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(projectRoot, 'bin', 'gws.mjs'), 'listen', '--json', '--port', String(port)], {
    cwd: projectRoot,
    env: { ...process.env, GWS_WEBHOOK_SECRET: secret },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  createInterface({ input: child.stdout! }).on('line', (line) => {
    try {
      const d = JSON.parse(line) as Delivery & { kind?: string };
      if (d.kind === 'gws.delivery') deliveries.push(d);
    } catch {} // not a delivery line
  });
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  const deadline = Date.now() + 30_000;
  while (!/listening/i.test(err)) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`gws listen did not start:\n${err}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return child;
}

/** The key a request to the service is sent with: the approver key for a decision (POST …/approval), the core key otherwise. */
export function keyFor(service: Pick<EvalService, 'key' | 'approverKey'>, method: string, route: string): string {
  return method === 'POST' && /^\/v1\/agent-runs\/[^/?]+\/approval$/.test(route) ? service.approverKey : service.key;
}

/**
 * `provider`: the default provider to start with instead of npm start's own (auto: the embedded model);
 * `modelPath`: another GGUF file for the embedded provider; `catalog`: the filesystem server's tools
 * as the README plugs it in (the default) or all of them; `toolServers`: another TOOL_SERVERS_FILE
 * instead; `env`: more settings (the scripted eval's upstream).
 */
export async function startEvalService(
  options: { provider?: string; modelPath?: string; catalog?: Catalog; toolServers?: object; env?: NodeJS.ProcessEnv } = {},
): Promise<EvalService> {
  const { provider, modelPath, catalog = 'readme' } = options;
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'gws-eval-'));
  const dir = path.join(scratch, 'share');
  const dataDir = path.join(scratch, 'data');
  const toolsFile = path.join(scratch, 'tools.json');
  mkdirSync(dir);
  writeFileSync(toolsFile, JSON.stringify(options.toolServers ?? toolServersFile(catalog, filesystemServer, dir)));
  const [api, temporal, ui, hook] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const env: NodeJS.ProcessEnv = { ...process.env };
  // npm start's own defaults, whatever the caller's environment (the bench runs its children in production).
  for (const name of ['NODE_ENV', 'DATABASE_URL', 'TEMPORAL_ADDRESS', 'DEFAULT_PROVIDER', 'UPSTREAM_BASE_URL', 'EMBEDDED_MODEL_PATH', 'TOOL_SERVERS_FILE']) {
    delete env[name];
  }
  Object.assign(env, { DATA_DIR: dataDir, PORT: String(api), TEMPORAL_DEV_PORT: String(temporal), TEMPORAL_UI_PORT: String(ui) });
  Object.assign(env, { TOOL_SERVERS_FILE: toolsFile, LOG_LEVEL: 'warn' });
  if (provider) env.DEFAULT_PROVIDER = provider;
  Object.assign(env, options.env ?? {});
  if (modelPath) env.EMBEDDED_MODEL_PATH = path.resolve(modelPath);
  const groups: number[] = [];
  const t0 = Date.now();
  let started: Started | undefined;
  let listener: ChildProcess | undefined;
  const stop = async () => {
    killGroup(listener, 'SIGINT');
    killGroup(started?.child, 'SIGINT');
    if (started) await exited(started.child, 30_000);
    for (const pgid of groups) killGroup({ pid: pgid } as ChildProcess, 'SIGKILL');
    killGroup(listener, 'SIGKILL');
    rmSync(scratch, { recursive: true, force: true });
  };
  try {
    started = await startNpmStart(env, groups);
    const startSeconds = (Date.now() - t0) / 1000;
    const key = /core\s+(gws_core_\S+)/.exec(started.output())?.[1];
    if (!key) throw new Error(`npm start printed no core key:\n${started.output()}`);
    const approverKey = /GWS_APPROVER_KEY=(gws_apv_\S+)/.exec(started.output())?.[1];
    if (!approverKey) throw new Error(`npm start printed no approver key:\n${started.output()}`);
    const set = await run(
      process.execPath,
      ['--import', 'tsx', 'bin/tenants.ts', 'webhook', 'set', '--tenant', 'dev', '--url', `http://127.0.0.1:${hook}/hook`],
      {
        cwd: projectRoot,
        env,
      },
    );
    const secret = /whsec_[A-Za-z0-9+/=]+/.exec(set.stdout)?.[0];
    if (!secret) throw new Error('tenants webhook set printed no signing secret');
    const deliveries: Delivery[] = [];
    listener = await listen(hook, secret, deliveries);
    return { base: `http://127.0.0.1:${api}`, key, approverKey, dir, deliveries, startSeconds, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
