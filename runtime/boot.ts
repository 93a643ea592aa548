// Start-up steps shared by the entry points in bin/.
import path from 'node:path';
import type { Logger } from 'pino';
import { ConfigError } from '../config/config-error.ts';
import { type Config, loadConfig } from '../config/env.ts';
import type { TemporalConnectionSettings } from '../config/temporal-connection-settings.ts';
import { type Database, openDatabase } from '../db/client.ts';
import { openAdminDatabase, serveDatabaseToAdmins } from './admin-access.ts';
import { type DataDirLock, lockDataDir } from './data-dir-lock.ts';
import { Lifecycle } from './lifecycle.ts';
import { createLogger } from './logger.ts';
import type { EncryptionCodec } from './payload-codec.ts';
import { payloadCodecFor, resolvePayloadKeyring } from './payload-keys.ts';
import { DATABASE, type StartUp, temporalDependency } from './startup.ts';
import { checkTemporal } from './temporal-client.ts';
import { resolveTemporalCli, startDevServer } from './temporal-dev-server.ts';
import { stopRecordingMetrics } from '../services/metrics.ts';

/** The configuration from the environment, over `defaults` (what an entry point sets when the operator did not); exits naming each bad variable. */
export function loadConfigOrExit(defaults: Record<string, string> = {}): Config {
  try {
    const config = loadConfig({ ...defaults, ...process.env });
    // A process that serves no metrics records none (services/metrics.ts): decided before anything is composed.
    if (!config.metrics) stopRecordingMetrics();
    return config;
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }
}

/** A database opened for a long-running process, not yet touched (no connection is made before its first query). */
export interface OpenedDatabase {
  database: Database;
  /** The data-dir lock, on PGlite. */
  lock?: DataDirLock;
}

/**
 * Opens the database without using it yet, taking the data-dir lock first for PGlite: so a second
 * `npm start` on the same DATA_DIR stops here, before it listens on anything.
 */
export function openServiceDatabase(config: Config, lifecycle: Lifecycle, purpose: string): OpenedDatabase {
  let lock: DataDirLock | undefined;
  if (!config.database.url) {
    const taken = lockDataDir(config.database.dataDir, purpose);
    lock = taken;
    lifecycle.onStop('data-dir lock', async () => taken.release());
  }
  const database = openDatabase(config.database);
  lifecycle.onStop('database', () => database.close());
  return { database, ...(lock ? { lock } : {}) };
}

/**
 * Migrates an opened database when configured to; with `startup`, an unreachable database is waited
 * out (runtime/startup.ts; migrations are safe to run again). On PGlite it then serves the database
 * to the admin CLIs on a socket in DATA_DIR, unless `serveAdmins` is false (one-shot commands).
 */
export async function prepareDatabase(
  config: Config,
  lifecycle: Lifecycle,
  { database, lock }: OpenedDatabase,
  options: { migrate?: boolean; serveAdmins?: boolean; logger?: Logger; startup?: StartUp } = {},
): Promise<Database> {
  if (options.migrate ?? config.database.migrateOnStart) {
    if (options.startup) await options.startup.waitFor(DATABASE, 'migrating the database', () => database.migrate());
    else await database.migrate();
  } else if (options.startup) {
    // Not migrating: start-up still waits until the database answers.
    await options.startup.waitFor(DATABASE, 'connecting to the database', () => database.ping());
  }
  if (lock && (options.serveAdmins ?? true)) {
    await serveDatabaseToAdmins(database, lock, config.database.dataDir, lifecycle, options.logger ?? createLogger(config));
  }
  return database;
}

/** Opens and prepares the database in one go (openServiceDatabase, then prepareDatabase). */
export async function ensureDatabase(
  config: Config,
  lifecycle: Lifecycle,
  purpose: string,
  options: { migrate?: boolean; serveAdmins?: boolean; logger?: Logger; startup?: StartUp } = {},
): Promise<Database> {
  return prepareDatabase(config, lifecycle, openServiceDatabase(config, lifecycle, purpose), options);
}

/**
 * The payload codec of this process. `allowDataDirKey`: without PAYLOAD_KEY, use (or create) the
 * key in DATA_DIR; otherwise PAYLOAD_KEY is required (production). Throws when it is missing.
 */
export function loadPayloadCodec(config: Config, logger: Logger, options: { allowDataDirKey: boolean }): EncryptionCodec {
  const resolved = resolvePayloadKeyring(config, options);
  const codec = payloadCodecFor(resolved);
  if (resolved.createdFile)
    logger.info({ file: resolved.createdFile, key_id: codec.keyId }, 'generated the payload encryption key (keep it: histories encrypted with it need it)');
  logger.debug({ source: resolved.source, key_id: codec.keyId, previous: resolved.keyring.previous.map((k) => k.id) }, 'payload encryption key');
  return codec;
}

export interface TemporalTarget {
  connection: TemporalConnectionSettings;
  /** Set when this process started the dev server. */
  uiUrl?: string;
}

/**
 * The cluster of TEMPORAL_ADDRESS or a temporal.toml profile's address, when set (start-up waits
 * until it answers: runtime/startup.ts); otherwise starts the dev server, persisted under DATA_DIR,
 * and stops it on shutdown. `uiCodecEndpoint`: the dev server's Web UI decodes payloads through it.
 */
export async function ensureTemporal(
  config: Config,
  logger: Logger,
  lifecycle: Lifecycle,
  startup: StartUp,
  options: { uiCodecEndpoint?: string } = {},
): Promise<TemporalTarget> {
  const { temporal } = config;
  if (temporal.external) {
    const { connection } = temporal;
    const unset = connection.source === 'TEMPORAL_ADDRESS' ? 'unset TEMPORAL_ADDRESS' : `remove the address from ${connection.source}`;
    const hint = `Start that server, or ${unset} to run the embedded dev server.`;
    await startup.waitFor({ ...temporalDependency(connection), hint }, 'connecting to Temporal', () => checkTemporal(connection));
    return { connection };
  }
  const cliPath = await resolveTemporalCli(temporal.cliPath);
  logger.info({ cli: cliPath, port: temporal.devPort }, 'starting Temporal dev server');
  const server = await startDevServer({
    cliPath,
    port: temporal.devPort,
    uiPort: temporal.uiPort,
    dbFile: path.join(config.database.dataDir, 'temporal.sqlite'),
    pidFile: path.join(config.database.dataDir, 'temporal-dev.pid'),
    namespace: temporal.connection.namespace,
    ...(options.uiCodecEndpoint ? { uiCodecEndpoint: options.uiCodecEndpoint } : {}),
    logger,
  });
  lifecycle.onStop('temporal dev server', () => server.stop());
  // The settings every connection of this process was given: the dev server's address (TEMPORAL_DEV_PORT), plaintext.
  return { connection: temporal.connection, uiUrl: server.uiUrl };
}

/**
 * For the admin commands: opens the database (runtime/admin-access.ts: beside a running
 * service, through its socket; a DATA_DIR without a database is refused), runs `fn`, and
 * closes everything.
 */
export async function withCommandDatabase<T>(config: Config, purpose: string, fn: (db: Database['db']) => Promise<T>): Promise<T> {
  const lifecycle = new Lifecycle(createLogger({ logLevel: 'warn' }), config.shutdownTimeoutMs);
  try {
    const database = await openAdminDatabase(config, purpose, lifecycle);
    return await fn(database.db);
  } finally {
    await lifecycle.stop();
  }
}
