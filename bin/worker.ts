// `npm run worker` (production): the Temporal worker alone, loading the
// workflow bundle that `npm run build` wrote. PAYLOAD_KEY is required in
// production (the API must hold the same key); elsewhere the key in DATA_DIR
// is used (and made if missing), as `npm start` does. A database or Temporal
// that is down while it starts is waited out (runtime/startup.ts).
// First: tracing starts before http and pg are loaded by the imports below (runtime/telemetry.ts).
import '../runtime/telemetry-register.ts';
import { existsSync } from 'node:fs';
import { ensureDatabase, loadConfigOrExit, loadPayloadCodec } from '../runtime/boot.ts';
import { Lifecycle } from '../runtime/lifecycle.ts';
import { startMetricsServer } from '../runtime/metrics-server.ts';
import { createLogger } from '../runtime/logger.ts';
import { ensureSearchAttributes, lazyTemporalClient } from '../runtime/temporal-client.ts';
import { ensureJourneyRetentionSchedule, ensureReconcileSchedule } from '../runtime/schedules.ts';
import { startWorker, type WorkerOptions } from '../runtime/worker.ts';
import { workflowBundleFor } from '../runtime/temporal-tracing.ts';
import { activityDeps } from '../runtime/compose-activities.ts';
import { notConnected, StartUp, temporalDependency } from '../runtime/startup.ts';
import { describeTemporalConnection } from '../config/temporal-connection-settings.ts';

// Metrics are on in production (METRICS_PORT 9465 unless set); elsewhere only when METRICS_PORT is set.
const config = loadConfigOrExit(process.env.NODE_ENV === 'production' ? { METRICS_PORT: '9465' } : {});
const logger = createLogger(config, 'gws-worker');
const lifecycle = new Lifecycle(logger, config.shutdownTimeoutMs);
lifecycle.handleSignals();
const startup = new StartUp(logger, config.startupTimeoutMs);

try {
  // The bundle this worker loads: the traced variant while tracing is on (runtime/temporal-tracing.ts).
  const bundle = workflowBundleFor(config.temporal.workflowBundlePath);
  if (!existsSync(bundle)) throw new Error(`No workflow bundle at ${bundle}: run \`npm run build\` first.`);
  const codec = loadPayloadCodec(config, logger, { allowDataDirKey: config.env !== 'production' });
  const temporal = config.temporal.connection;
  const temporalDep = temporalDependency(temporal);
  const database = await ensureDatabase(config, lifecycle, 'npm run worker', { logger, startup });
  const handle = lazyTemporalClient(temporal, codec);
  await startup.waitFor(temporalDep, 'registering search attributes', () => ensureSearchAttributes(handle.connection, temporal.namespace, logger));
  await startup.waitFor(temporalDep, 'creating the schedules', async () => {
    await ensureReconcileSchedule(handle.client, config.temporal.taskQueue, config.runs.reconcileIntervalSeconds, logger);
    await ensureJourneyRetentionSchedule(handle.client, config.temporal.taskQueue, logger);
  });
  await handle.close();
  const activities = activityDeps(config, database.db, { logger });
  // The worker closes its tool servers when it stops; this covers a start that fails before it runs.
  lifecycle.onStop('tool servers', () => activities.toolServers.close());
  const workerOptions: WorkerOptions = {
    temporal,
    taskQueue: config.temporal.taskQueue,
    activities,
    payloadCodec: codec,
    logger,
    workflowBundlePath: config.temporal.workflowBundlePath,
    shutdownGraceMs: config.workerShutdownGraceMs,
    maxCachedWorkflows: config.workerMaxCachedWorkflows,
    temporalMetricsPort: config.metrics?.temporalPort,
    versioning: config.temporal.versioning,
  };
  // Tried again whole if Temporal is unreachable while the worker connects (the worker's native connection
  // fails with a TransportError, before the worker runs): a failure after it ran has closed the tool servers.
  const worker = await startup.waitFor(temporalDep, 'starting the worker', () => startWorker(workerOptions), { retryOn: notConnected });
  lifecycle.onStop('worker', () => worker.stop());
  if (config.metrics) {
    const metrics = await startMetricsServer({ ...config.metrics, temporalMetricsUrl: `http://127.0.0.1:${config.metrics.temporalPort}/metrics`, logger });
    lifecycle.onStop('metrics server', () => metrics.close());
  }
  startup.ready();
  logger.info({ temporal: describeTemporalConnection(temporal), taskQueue: config.temporal.taskQueue }, 'worker running');
  await worker.done;
  await lifecycle.stop();
} catch (err) {
  logger.fatal({ err: (err as Error).message }, 'worker failed');
  await lifecycle.stop();
  process.exit(1);
}
