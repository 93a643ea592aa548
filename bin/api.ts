// `npm run api` (production): the HTTP API alone, against the Temporal cluster of
// TEMPORAL_ADDRESS or a temporal.toml profile (config/temporal-profile.ts) and
// DATABASE_URL. Run `npm run worker` beside it. It listens at once and answers
// 503 "starting" until the database is migrated (waiting out a database that is
// down: runtime/startup.ts); it starts even while Temporal is down, and /health
// reports 503 until it is reachable. PAYLOAD_KEY is required
// in production (the worker must hold the same key); elsewhere the key in
// DATA_DIR is used (and made if missing), as `npm start` does.
// First: tracing starts before http and pg are loaded by the imports below (runtime/telemetry.ts).
import '../runtime/telemetry-register.ts';
import { createApp, createStartingApp } from '../api/app.ts';
import { listen } from '../api/server.ts';
import { loadConfigOrExit, loadPayloadCodec, openServiceDatabase, prepareDatabase } from '../runtime/boot.ts';
import { composeApi } from '../runtime/compose-api.ts';
import { Lifecycle } from '../runtime/lifecycle.ts';
import { startMetricsServer } from '../runtime/metrics-server.ts';
import { createLogger } from '../runtime/logger.ts';
import { lazyTemporalClient } from '../runtime/temporal-client.ts';
import { StartUp } from '../runtime/startup.ts';
import { warmInboxAssets } from '../inbox/assets.ts';
import { describeTemporalConnection } from '../config/temporal-connection-settings.ts';

// Metrics are on in production (METRICS_PORT 9464 unless set); elsewhere only when METRICS_PORT is set.
const config = loadConfigOrExit(process.env.NODE_ENV === 'production' ? { METRICS_PORT: '9464' } : {});
const logger = createLogger(config, 'gws-api');
const lifecycle = new Lifecycle(logger, config.shutdownTimeoutMs);
lifecycle.handleSignals();
const startup = new StartUp(logger, config.startupTimeoutMs);

try {
  const codec = loadPayloadCodec(config, logger, { allowDataDirKey: config.env !== 'production' });
  const opened = openServiceDatabase(config, lifecycle, 'npm run api');
  const handle = lazyTemporalClient(config.temporal.connection, codec);
  lifecycle.onStop('temporal client', () => handle.close());
  const server = await listen(createStartingApp(config, logger, startup.pending), config.http.host, config.http.port);
  lifecycle.onStop('http server', () => server.close());
  const database = await prepareDatabase(config, lifecycle, opened, { logger, startup });
  server.serve(createApp(composeApi(config, logger, database, handle, { starting: startup.pending })));
  warmInboxAssets((err) => logger.warn({ err: err.message }, 'the inbox page could not be bundled; GET /inbox tries again'));
  if (config.metrics) {
    const metrics = await startMetricsServer({ ...config.metrics, logger });
    lifecycle.onStop('metrics server', () => metrics.close());
  }
  startup.ready();
  logger.info({ url: server.url, temporal: describeTemporalConnection(config.temporal.connection) }, 'api listening');
} catch (err) {
  logger.fatal({ err: (err as Error).message }, 'api start-up failed');
  await lifecycle.stop();
  process.exit(1);
}
