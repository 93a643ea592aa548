// The admin CLIs (`npm run keys|credits|tenants`) and the embedded database.
// The process that owns DATA_DIR's PGlite (npm start, or api/worker without
// DATABASE_URL) serves it on a Unix socket and records that socket in the
// data-dir lock file; a CLI started beside it connects there with `pg`. With no
// owner, the CLI opens the PGlite itself, as the owner. A DATA_DIR with no
// database is refused, and nothing is created.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../config/env.ts';
import { ADMIN_SOCKET_NAME, serveAdminSocket } from '../db/admin-socket.ts';
import { type Database, hasPgliteDatabase, openDatabase, openPglite, openPgliteSocket } from '../db/client.ts';
import { DataDirInUseError, type DataDirLock, dataDirHolder, lockDataDir } from './data-dir-lock.ts';
import type { Lifecycle } from './lifecycle.ts';

// Unix socket paths are limited to about 104-108 bytes; longer DATA_DIRs get one in the temp dir.
const MAX_SOCKET_PATH = 100;
const TMP_PREFIX = 'gws-db-';

/** The socket's place: DATA_DIR/admin-socket/.s.PGSQL.5432 (the directory is private to this user). */
function socketPathFor(dataDir: string): string {
  const inDataDir = path.join(dataDir, 'admin-socket', ADMIN_SOCKET_NAME);
  return inDataDir.length <= MAX_SOCKET_PATH ? inDataDir : path.join(mkdtempSync(path.join(os.tmpdir(), TMP_PREFIX)), ADMIN_SOCKET_NAME);
}

const inTempDir = (socket: string) => path.basename(path.dirname(socket)).startsWith(TMP_PREFIX) && path.dirname(path.dirname(socket)) === os.tmpdir();

/**
 * For the owner of the embedded database: serves it to the admin CLIs and records the
 * socket in the lock. Failing to serve is a warning, not a failed start: only the CLIs
 * are affected (they then wait and say who holds the database).
 */
export async function serveDatabaseToAdmins(database: Database, lock: DataDirLock, dataDir: string, lifecycle: Lifecycle, logger: Logger): Promise<void> {
  if (!database.pglite) return;
  // A crashed owner's socket in the temp dir; one in DATA_DIR is replaced in place.
  if (lock.stale?.socket && inTempDir(lock.stale.socket)) rmSync(path.dirname(lock.stale.socket), { recursive: true, force: true });
  let socket: string | undefined;
  try {
    socket = socketPathFor(dataDir);
    const server = await serveAdminSocket(database.pglite, socket, {
      onError: (err) => logger.warn({ err: err.message }, 'admin socket'),
    });
    lock.advertise(socket);
    lifecycle.onStop('admin socket', async () => {
      lock.advertise(undefined);
      await server.close();
      if (inTempDir(server.path)) rmSync(path.dirname(server.path), { recursive: true, force: true });
    });
    logger.debug({ socket }, 'serving the database to the admin CLIs');
  } catch (err) {
    if (socket && inTempDir(socket)) rmSync(path.dirname(socket), { recursive: true, force: true });
    logger.warn({ err: (err as Error).message, socket }, 'cannot serve the database to the admin CLIs (npm run keys|credits|tenants) while this process runs');
  }
}

export class NoDatabaseError extends Error {}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const unreachable = (err: unknown) =>
  ['ENOENT', 'ECONNREFUSED', 'ECONNRESET'].includes((err as NodeJS.ErrnoException).code ?? '') || /Connection terminated/.test((err as Error).message);

/**
 * The database for a one-shot admin command. DATABASE_URL: Postgres, migrated as the
 * services do. Otherwise DATA_DIR's PGlite: through the socket of the live process that
 * owns it (never migrated from here), or opened and migrated directly when none does.
 * Throws NoDatabaseError, creating nothing, when DATA_DIR holds no database.
 * `waitMs`: how long to wait for an owner that serves no socket (one starting, or another
 * command) before giving up.
 */
export async function openAdminDatabase(config: Config, purpose: string, lifecycle: Lifecycle, options: { waitMs?: number } = {}): Promise<Database> {
  if (config.database.url) {
    const database = openDatabase(config.database);
    lifecycle.onStop('database', () => database.close());
    await database.migrate();
    return database;
  }
  const { dataDir } = config.database;
  if (!hasPgliteDatabase(dataDir)) {
    throw new NoDatabaseError(
      `No database in DATA_DIR ${dataDir} (nothing was created). Run this command where \`npm start\` runs, or set DATA_DIR to the data directory of the service you mean (or DATABASE_URL for Postgres). To make a new database there, start the service once (npm start) or run npm run db:migrate.`,
    );
  }
  const deadline = Date.now() + (options.waitMs ?? 30_000);
  let waited = false;
  for (;;) {
    const holder = dataDirHolder(dataDir);
    if (holder?.socket) {
      try {
        const database = await openPgliteSocket(holder.socket);
        lifecycle.onStop('database', () => database.close());
        return database;
      } catch (err) {
        if (!unreachable(err)) throw err;
        // The owner is stopping (or just stopped): look again.
      }
    } else if (!holder) {
      let lock: DataDirLock;
      try {
        lock = lockDataDir(dataDir, purpose);
      } catch (err) {
        if (!(err instanceof DataDirInUseError)) throw err;
        continue; // another process took it just now
      }
      lifecycle.onStop('data-dir lock', async () => lock.release());
      const database = openPglite(dataDir);
      lifecycle.onStop('database', () => database.close());
      await database.migrate();
      return database;
    }
    if (Date.now() > deadline) {
      throw new Error(
        holder
          ? `The embedded database in ${dataDir} is held by process ${holder.pid} (${holder.purpose}), which does not serve it to admin commands. Stop it, or try again when it is done.`
          : `The embedded database in ${dataDir} could not be reached through its owner's socket.`,
      );
    }
    if (!waited && holder) {
      waited = true;
      process.stderr.write(`Waiting for process ${holder.pid} (${holder.purpose}), which holds the database in ${dataDir}…\n`);
    }
    await sleep(200);
  }
}
