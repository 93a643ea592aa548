// Opens the database: Postgres through node-postgres when DATABASE_URL is set,
// otherwise the embedded PGlite under DATA_DIR. Both give the same Drizzle API.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import pg from 'pg';
import { migrationsFolder } from '../runtime/paths.ts';
import { schema } from './schema.ts';

export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;

export interface Database {
  db: Db;
  kind: 'postgres' | 'pglite';
  /** The node-postgres pool, when on Postgres (the shared rate-limit store uses it). */
  pool?: pg.Pool;
  /** Applies committed migrations; safe to call from several processes at once. */
  migrate(): Promise<void>;
  /** Cheap liveness probe used by /health. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

// Arbitrary constant: serialises concurrent migrators (API and worker starting together).
const MIGRATION_LOCK_ID = 727_001;

export function openPostgres(url: string, poolSize = 10): Database {
  const pool = new pg.Pool({ connectionString: url, max: poolSize, connectionTimeoutMillis: 5_000 });
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
  const client = new PGlite(dir);
  const db = drizzlePglite(client, { schema }) as unknown as Db;
  return {
    db,
    kind: 'pglite',
    async migrate() {
      await migratePglite(drizzlePglite(client, { schema }), { migrationsFolder });
    },
    async ping() {
      await db.execute(sql`select 1`);
    },
    close: () => client.close(),
  };
}

export function openDatabase(options: { url?: string; dataDir: string; poolSize?: number }): Database {
  return options.url ? openPostgres(options.url, options.poolSize) : openPglite(options.dataDir);
}
