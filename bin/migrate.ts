// `npm run db:migrate`: applies the committed migrations and exits.
import { ensureDatabase, loadConfigOrExit } from '../runtime/boot.ts';
import { Lifecycle } from '../runtime/lifecycle.ts';
import { createLogger } from '../runtime/logger.ts';

const config = loadConfigOrExit();
const logger = createLogger(config);
const lifecycle = new Lifecycle(logger, config.shutdownTimeoutMs);
try {
  await ensureDatabase(config, lifecycle, 'npm run db:migrate', { migrate: true });
  console.log(`migrations applied (${config.database.url ? 'Postgres' : `PGlite in ${config.database.dataDir}`})`);
} finally {
  await lifecycle.stop();
}
