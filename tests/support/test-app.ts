// Starts the real API (Koa over a real socket) against the run's Postgres and
// Temporal, configured through the same environment variables as production.
import { type Logger, pino } from 'pino';
import { inject } from 'vitest';
import { createApp } from '../../api/app.ts';
import { listen } from '../../api/server.ts';
import { loadConfig } from '../../config/env.ts';
import { type Database, openPostgres } from '../../db/client.ts';
import { composeApi } from '../../runtime/compose-api.ts';
import { lazyTemporalClient } from '../../runtime/temporal-client.ts';
import { codecOf, payloadEnv } from './payload-codec.ts';

export interface TestApp {
  url: string;
  database: Database;
  close(): Promise<void>;
}

export async function startTestApp(env: Record<string, string> = {}, logger?: Logger): Promise<TestApp> {
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    DATABASE_URL: inject('databaseUrl'),
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TRIAL_RATE_LIMIT_POINTS: '100000',
    ...payloadEnv(),
    ...env,
  });
  const database = openPostgres(config.database.url!, 4);
  const temporal = lazyTemporalClient(config.temporal.connection, codecOf(config));
  const app = createApp(composeApi(config, logger ?? pino({ level: 'silent' }), database, temporal));
  const server = await listen(app, '127.0.0.1', 0);
  return {
    url: server.url,
    database,
    async close() {
      await server.close(1_000);
      await temporal.close().catch(() => {});
      await database.close();
    },
  };
}
