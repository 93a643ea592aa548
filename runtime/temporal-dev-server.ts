// Starts and stops `temporal server start-dev` as a child process: the embedded
// default when no TEMPORAL_ADDRESS is given. Used by `npm start` and by the tests.
import net from 'node:net';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import type { Logger } from 'pino';
import { CUSTOM_SEARCH_ATTRIBUTES } from '../domain/runs/search-attributes.ts';
import { forgetDevServer, recordDevServer, stopRecordedDevServer } from './dev-server-pidfile.ts';
import { ensureTemporalCliScript } from '../config/paths.ts';
import { localTemporal } from '../config/temporal-connection-settings.ts';
import { isTemporalReachable } from './temporal-client.ts';

const execFileAsync = promisify(execFile);

export interface DevServerOptions {
  cliPath: string;
  port: number;
  uiPort: number;
  /** SQLite file that persists workflows across restarts; omit for in-memory. */
  dbFile?: string;
  namespace: string;
  /** The Web UI's remote codec endpoint (its browser side POSTs to <endpoint>/decode). */
  uiCodecEndpoint?: string;
  /**
   * Where the server's pid is kept while it runs (runtime/dev-server-pidfile.ts): a server left
   * running by a start that was killed (kill -9) is recognised there and stopped before this one starts.
   */
  pidFile?: string;
  logger: Logger;
  readyTimeoutMs?: number;
  /** More flags for `temporal server start-dev` (the rollout drill's dynamic config, say). */
  extraArgs?: string[];
}

export interface DevServer {
  address: string;
  uiUrl: string;
  pid: number;
  stop(): Promise<void>;
}

/** The Temporal CLI: TEMPORAL_CLI, else what scripts/ensure-temporal-cli.sh finds or installs. */
export async function resolveTemporalCli(explicit?: string): Promise<string> {
  if (explicit) return explicit;
  try {
    const { stdout } = await execFileAsync('bash', [ensureTemporalCliScript, '--path'], { timeout: 300_000 });
    return stdout.trim();
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr ?? '';
    throw new Error(`No Temporal CLI available.\n${stderr.trim()}`);
  }
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** Fails with the variable to set when another program holds `port` (the dev server would only say "bind: address already in use"). */
async function assertPortFree(port: number, variable: string): Promise<void> {
  const probe = net.createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new Error(
              `Port ${port} on 127.0.0.1 is already in use, and the Temporal dev server needs it. Set ${variable} to a free port, for example ${variable}=${port + 1}.`,
            )
          : err,
      ),
    );
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve()));
  });
}

/** The dynamic config that keeps the server's search attributes cached between reads (the server's own default). */
const KEEP_SEARCH_ATTRIBUTES_CACHED = ['--dynamic-config-value', 'system.forceSearchAttributesCacheRefreshOnRead=false'];

export async function startDevServer(options: DevServerOptions): Promise<DevServer> {
  const address = `127.0.0.1:${options.port}`;
  if (options.pidFile) await stopRecordedDevServer(options.pidFile, options.logger);
  if (await isTemporalReachable(localTemporal(address))) {
    throw new Error(
      `A Temporal server already answers at ${address}, and not one this data directory's npm start left running. Stop it, set TEMPORAL_ADDRESS=${address} to use it, or set TEMPORAL_DEV_PORT to another port.`,
    );
  }
  await assertPortFree(options.port, 'TEMPORAL_DEV_PORT');
  await assertPortFree(options.uiPort, 'TEMPORAL_UI_PORT');
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(options.port),
    '--ui-port',
    String(options.uiPort),
    // "default" always exists; naming it again is an error on some CLI versions.
    ...(options.namespace === 'default' ? [] : ['--namespace', options.namespace]),
    '--log-level',
    'warn',
    ...Object.entries(CUSTOM_SEARCH_ATTRIBUTES).flatMap(([name, type]) => ['--search-attribute', `${name}=${type}`]),
    // Those are its search attributes from the start, so it keeps them cached as production servers do.
    // The CLI's default rereads them (the cluster metadata and the namespace) from its database at every
    // use, for attributes added while it runs: about 22 reads a run that carries them (docs/performance.md, row 11).
    ...KEEP_SEARCH_ATTRIBUTES_CACHED,
    ...(options.dbFile ? ['--db-filename', options.dbFile] : []),
    ...(options.uiCodecEndpoint ? ['--ui-codec-endpoint', options.uiCodecEndpoint] : []),
    ...(options.extraArgs ?? []),
  ];
  // The dev server picks further ports for its own services at start, and panics
  // when one is taken in between (seen once in CI): such an early exit is retried.
  for (let attempt = 1; ; attempt++) {
    try {
      return await launch(options, args, address);
    } catch (err) {
      if (!(err instanceof EarlyExit) || attempt >= START_ATTEMPTS) throw err;
      options.logger.warn({ attempt, reason: err.firstLine }, 'Temporal dev server exited during start-up; starting it again');
    }
  }
}

const START_ATTEMPTS = 3;

/** The dev server ended before it answered: its stderr's head (where a panic's reason is) and tail. */
class EarlyExit extends Error {
  constructor(
    readonly firstLine: string,
    lines: string,
  ) {
    super(`Temporal dev server exited during start-up:\n${lines}`);
  }
}

async function launch(options: DevServerOptions, args: string[], address: string): Promise<DevServer> {
  // Its own process group: Ctrl-C must not kill the server before the worker
  // has drained; stop() ends it last. If this process dies another way, the
  // exit hook still ends it.
  const child = spawn(options.cliPath, args, { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  if (options.pidFile && child.pid) recordDevServer(options.pidFile, child.pid, options.port);
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const stderrHead: string[] = [];
  const stderrTail: string[] = [];
  const stderrText = () => [...stderrHead, ...(stderrTail.length ? ['…', ...stderrTail] : [])].join('\n');
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    for (const line of chunk.split('\n').filter(Boolean)) {
      if (stderrHead.length < 10) stderrHead.push(line);
      else stderrTail.push(line);
      if (stderrTail.length > 10) stderrTail.shift();
      options.logger.debug({ temporal: line }, 'temporal dev server');
    }
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited(child);
      clearTimeout(killer);
    }
    if (options.pidFile) forgetDevServer(options.pidFile);
    process.off('exit', killOnExit);
  };

  const deadline = Date.now() + (options.readyTimeoutMs ?? 60_000);
  while (!(await isTemporalReachable(localTemporal(address)))) {
    if (child.exitCode !== null || child.signalCode !== null) {
      if (options.pidFile) forgetDevServer(options.pidFile);
      process.off('exit', killOnExit);
      throw new EarlyExit(stderrHead[0] ?? `exit code ${child.exitCode ?? child.signalCode}`, stderrText());
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`Temporal dev server did not become ready at ${address}:\n${stderrText()}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return { address, uiUrl: `http://127.0.0.1:${options.uiPort}`, pid: child.pid!, stop };
}
