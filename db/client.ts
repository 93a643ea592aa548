// Opens the database: Postgres through node-postgres when DATABASE_URL is set,
// otherwise the embedded PGlite under DATA_DIR; or, for the admin CLIs beside a
// running service, that service's PGlite over its socket (db/admin-socket.ts).
// All give the same Drizzle API.
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { btree_gin } from '@electric-sql/pglite/contrib/btree_gin';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { sql } from 'drizzle-orm';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import pg from 'pg';
import { migrationsFolder } from '../config/paths.ts';
import { newPool } from './pool.ts';
import { schema } from './schema.ts';

export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;

export interface Database {
  db: Db;
  kind: 'postgres' | 'pglite' | 'pglite-socket';
  /** The node-postgres pool, when on Postgres (the shared rate-limit store uses it). */
  pool?: pg.Pool;
  /** The PGlite instance, when this process opened it (it can serve it to the admin CLIs). */
  pglite?: PGlite;
  /** Applies committed migrations; safe to call from several processes at once. */
  migrate(): Promise<void>;
  /** Cheap liveness probe used by /health. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

// Arbitrary constant: serialises concurrent migrators (API and worker starting together).
const MIGRATION_LOCK_ID = 727_001;

export function openPostgres(url: string, poolSize = 10): Database {
  const pool = newPool({ connectionString: url, max: poolSize, connectionTimeoutMillis: 5_000 });
  // An idle client losing its server must not crash the process; the next query reports it.
  pool.on('error', () => {});
  const db = drizzlePg(pool, { schema }) as unknown as Db;
  return {
    db,
    kind: 'postgres',
    pool,
    async migrate() {
      const client = await pool.connect();
      try {
        await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
        await migratePg(drizzlePg(client, { schema }), { migrationsFolder });
      } finally {
        await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]).catch(() => {});
        client.release();
      }
    },
    async ping() {
      await db.execute(sql`select 1`);
    },
    close: () => pool.end(),
  };
}

/** PGlite keeps its files in `dataDir/pglite`; `memory` gives a throwaway in-memory database. */
export function openPglite(dataDir: string | 'memory'): Database {
  let dir: string | undefined;
  if (dataDir !== 'memory') {
    dir = path.join(dataDir, 'pglite');
    mkdirSync(dir, { recursive: true });
  }
  // btree_gin and pg_trgm: the runs search index (migrations 0009 and 0010).
  const client = new PGlite({ dataDir: dir, extensions: { btree_gin, pg_trgm } });
  const db = drizzlePglite(client, { schema }) as unknown as Db;
  return {
    db,
    kind: 'pglite',
    pglite: client,
    async migrate() {
      await migratePglite(drizzlePglite(client, { schema }), { migrationsFolder });
    },
    async ping() {
      await db.execute(sql`select 1`);
    },
    close: () => client.close(),
  };
}

/** PGlite on disk keeps `PG_VERSION` in its directory (`dataDir/pglite`, see openPglite). */
export function hasPgliteDatabase(dataDir: string): boolean {
  return existsSync(path.join(dataDir, 'pglite', 'PG_VERSION'));
}

/**
 * Connects to the PGlite that another process serves on `socketPath` (a Postgres-style
 * `.s.PGSQL.<port>` file). One connection, so one short session: the serving process
 * lets each statement or transaction of it run alone. Never migrates: its owner does.
 */
export async function openPgliteSocket(socketPath: string): Promise<Database> {
  const port = Number(/\.s\.PGSQL\.(\d+)$/.exec(socketPath)?.[1]);
  if (!port) throw new Error(`not a Postgres socket path: ${socketPath}`);
  const client = new pg.Client({
    host: path.dirname(socketPath),
    port,
    user: 'postgres',
    database: 'postgres',
    connectionTimeoutMillis: 10_000,
    query_timeout: 60_000,
  });
  // A connection lost while idle must not crash the command; the next query reports it.
  client.on('error', () => {});
  await client.connect();
  const db = drizzlePg(client, { schema }) as unknown as Db;
  return {
    db,
    kind: 'pglite-socket',
    async migrate() {
      throw new Error('the database served on the admin socket is migrated by the process that serves it');
    },
    async ping() {
      await db.execute(sql`select 1`);
    },
    close: () => client.end(),
  };
}

export function openDatabase(options: { url?: string; dataDir: string; poolSize?: number }): Database {
  return options.url ? openPostgres(options.url, options.poolSize) : openPglite(options.dataDir);
}
