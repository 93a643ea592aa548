// `npm run worker` (production): the Temporal worker alone, loading the
// workflow bundle that `npm run build` wrote. PAYLOAD_KEY is required in
// production (the API must hold the same key); elsewhere the key in DATA_DIR
// is used (and made if missing), as `npm start` does.
// First: tracing starts before http and pg are loaded by the imports below (runtime/telemetry.ts).
import '../runtime/telemetry-register.ts';
import { existsSync } from 'node:fs';
import { ensureDatabase, loadConfigOrExit, loadPayloadCodec } from '../runtime/boot.ts';
import { Lifecycle } from '../runtime/lifecycle.ts';
import { startMetricsServer } from '../runtime/metrics-server.ts';
import { createLogger } from '../runtime/logger.ts';
import { ensureSearchAttributes, lazyTemporalClient } from '../runtime/temporal-client.ts';
import { ensureJourneyRetentionSchedule, ensureReconcileSchedule } from '../runtime/schedules.ts';
import { startWorker } from '../runtime/worker.ts';
import { activityDeps } from '../runtime/compose-activities.ts';

// Metrics are on in production (METRICS_PORT 9465 unless set); elsewhere only when METRICS_PORT is set.
const config = loadConfigOrExit(process.env.NODE_ENV === 'production' ? { METRICS_PORT: '9465' } : {});
const logger = createLogger(config, 'gws-worker');
const lifecycle = new Lifecycle(logger, config.shutdownTimeoutMs);
lifecycle.handleSignals();

try {
  if (!existsSync(config.temporal.workflowBundlePath)) {
    throw new Error(`No workflow bundle at ${config.temporal.workflowBundlePath}: run \`npm run build\` first.`);
  }
  const codec = loadPayloadCodec(config, logger, { allowDataDirKey: config.env !== 'production' });
  const address = config.temporal.address ?? `127.0.0.1:${config.temporal.devPort}`;
  const database = await ensureDatabase(config, lifecycle, 'npm run worker');
  const handle = lazyTemporalClient(address, config.temporal.namespace, codec);
  await ensureSearchAttributes(handle.connection, config.temporal.namespace, logger);
  await ensureReconcileSchedule(handle.client, config.temporal.taskQueue, config.runs.reconcileIntervalSeconds, logger);
  await ensureJourneyRetentionSchedule(handle.client, config.temporal.taskQueue, logger);
  await handle.close();
  const activities = activityDeps(config, database.db, { logger });
  // The worker closes its tool servers when it stops; this covers a start that fails before it runs.
  lifecycle.onStop('tool servers', () => activities.toolServers.close());
  const worker = await startWorker({
    address,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    activities,
    payloadCodec: codec,
    logger,
    workflowBundlePath: config.temporal.workflowBundlePath,
    shutdownGraceMs: config.workerShutdownGraceMs,
    temporalMetricsPort: config.metrics?.temporalPort,
  });
  lifecycle.onStop('worker', () => worker.stop());
  if (config.metrics) {
    const metrics = await startMetricsServer({ ...config.metrics, temporalMetricsUrl: `http://127.0.0.1:${config.metrics.temporalPort}/metrics`, logger });
    lifecycle.onStop('metrics server', () => metrics.close());
  }
  logger.info({ temporal: address, taskQueue: config.temporal.taskQueue }, 'worker running');
  await worker.done;
  await lifecycle.stop();
} catch (err) {
  logger.fatal({ err: (err as Error).message }, 'worker failed');
  await lifecycle.stop();
  process.exit(1);
}
