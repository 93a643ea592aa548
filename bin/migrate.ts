// `npm run db:migrate`: applies the committed migrations and exits. On the embedded
// PGlite it creates the database when DATA_DIR has none, and refuses while a service
// holds it (that service applied the migrations when it started).
import { ensureDatabase, loadConfigOrExit } from '../runtime/boot.ts';
import { Lifecycle } from '../runtime/lifecycle.ts';
import { createLogger } from '../runtime/logger.ts';

const config = loadConfigOrExit();
const logger = createLogger(config);
const lifecycle = new Lifecycle(logger, config.shutdownTimeoutMs);
try {
  await ensureDatabase(config, lifecycle, 'npm run db:migrate', { migrate: true, serveAdmins: false });
  console.log(`migrations applied (${config.database.url ? 'Postgres' : `PGlite in ${config.database.dataDir}`})`);
} finally {
  await lifecycle.stop();
}
