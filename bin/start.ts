// `npm start`: the whole service in one process on embedded defaults. Starts
// the Temporal dev server (unless TEMPORAL_ADDRESS or a temporal.toml profile
// names a cluster: config/temporal-profile.ts), applies migrations, runs the
// worker and the API, and on first start prints the dev keys once.
// Payloads are encrypted with PAYLOAD_KEY, or with a key it generates on first
// start and keeps in DATA_DIR/payload-key.json; the dev server's UI decodes them
// through the API's codec endpoint. The API listens first and answers 503
// "starting" until all of that is done (runtime/startup.ts): /health's first 200
// means ready. A database or Temporal that is down meanwhile is waited out.
// First: tracing starts before http and pg are loaded by the imports below (runtime/telemetry.ts).
import '../runtime/telemetry-register.ts';
import { createApp, createStartingApp } from '../api/app.ts';
import { listen } from '../api/server.ts';
import { type CreatedKey, ensureDevKeys } from '../services/keys.ts';
import { ensureTemporal, loadConfigOrExit, loadPayloadCodec, openServiceDatabase, prepareDatabase } from '../runtime/boot.ts';
import { composeApi } from '../runtime/compose-api.ts';
import { Lifecycle } from '../runtime/lifecycle.ts';
import { startMetricsServer } from '../runtime/metrics-server.ts';
import { stopWhenParentDies } from '../runtime/parent-watch.ts';
import { createLogger } from '../runtime/logger.ts';
import { ensureSearchAttributes, lazyTemporalClient } from '../runtime/temporal-client.ts';
import { ensureJourneyRetentionSchedule, ensureReconcileSchedule } from '../runtime/schedules.ts';
import { startWorker, type WorkerOptions } from '../runtime/worker.ts';
import { activityDeps } from '../runtime/compose-activities.ts';
import { connectToolServers } from '../services/tool-servers.ts';
import { DATABASE, notConnected, StartUp, temporalDependency } from '../runtime/startup.ts';
import { warmInboxAssets } from '../inbox/assets.ts';

// The embedded model serves the model aliases when its file is there (scripts/ensure-embedded-model.sh).
const config = loadConfigOrExit({ DEFAULT_PROVIDER: 'auto' });
const logger = createLogger(config);
const lifecycle = new Lifecycle(logger, config.shutdownTimeoutMs);
lifecycle.handleSignals();
stopWhenParentDies();
const startup = new StartUp(logger, config.startupTimeoutMs);

function modelsLine(): string {
  const { embedded, embeddedAbsent, defaultProvider } = config.models;
  const served = `svc-workspace* served by ${defaultProvider}`;
  if (embedded) return `${served}; embedded model ${embedded.name} (loads on first use, CPU, ${embedded.threads} threads)`;
  return `${served}; no embedded model: ${embeddedAbsent}`;
}

/** The dev keys this start created, shown once; or where to mint more. */
function keyLines(keys: CreatedKey[] | null): string[] {
  if (!keys) return ['Dev keys were printed when they were created. Mint more with: npm run keys -- create --tenant dev --kind core'];
  const core = keys.find((k) => k.kind === 'core');
  const approver = keys.find((k) => k.kind === 'approver');
  const lines = [
    core
      ? 'Dev tenant "dev" created. These keys are shown ONCE; only their hashes are stored:'
      : 'Dev tenant "dev" had no approver key. This one is shown ONCE; only its hash is stored:',
    ...keys.map((key) => `  ${key.kind.padEnd(9)} ${key.secret}${key.name ? `   (${key.name})` : ''}`),
  ];
  if (core)
    lines.push('', 'The core key submits and reads runs (the README, the examples and `npx gws` read GWS_API_KEY):', `  export GWS_API_KEY=${core.secret}`);
  if (approver)
    lines.push(
      `The approver key decides approvals, and is the only kind that can (the inbox and \`npx gws approve\` read GWS_APPROVER_KEY):`,
      `  export GWS_APPROVER_KEY=${approver.secret}`,
    );
  if (core) lines.push(`  The dev tenant starts with ${config.runs.devStartingCredits} credits (npm run credits -- grant --tenant dev --amount N for more).`);
  return lines;
}

function banner(apiUrl: string, uiUrl: string | undefined, keys: CreatedKey[] | null, keyId: string): string {
  const codec = config.codecEndpoint.enabled
    ? `${apiUrl}/codec   (${config.codecEndpoint.token ? 'Authorization: Bearer CODEC_ENDPOINT_TOKEN' : 'this machine only'}${uiUrl ? '; the Temporal UI uses it' : ''})`
    : 'disabled (CODEC_ENDPOINT_ENABLED=false): the Temporal UI shows payloads encrypted';
  const lines = [
    '',
    'Governed Workspace Service is running',
    `  API          ${apiUrl}`,
    `  Docs         ${apiUrl}/docs   (OpenAPI: ${apiUrl}/openapi.json)`,
    `  Inbox        ${apiUrl}/inbox   (approve runs in the browser; sign in with the approver key)`,
    `  Temporal UI  ${uiUrl ?? '(external cluster: use its own UI)'}`,
    `  Database     ${config.database.url ? 'Postgres (DATABASE_URL)' : `embedded PGlite in ${config.database.dataDir}`}`,
    `  Payloads     encrypted, key ${keyId} (${config.payload.key ? 'PAYLOAD_KEY' : `kept in ${config.database.dataDir}/payload-key.json`})`,
    `  Codec        ${codec}`,
    `  Models       ${modelsLine()}`,
  ];
  lines.push('', ...keyLines(keys));
  lines.push('', 'Press Ctrl-C to stop.', '');
  return lines.join('\n');
}

try {
  // The database first: for PGlite it takes the data-dir lock, so a second `npm start` stops here.
  const opened = openServiceDatabase(config, lifecycle, 'npm start');
  // Development always has a key: PAYLOAD_KEY, or the one generated in DATA_DIR on first start.
  const codec = loadPayloadCodec(config, logger, { allowDataDirKey: true });
  const handle = lazyTemporalClient(config.temporal.connection, codec);
  lifecycle.onStop('temporal client', () => handle.close());
  // Listen before the dev server starts: it picks random ports of its own, which must not
  // take ours. Until start-up has finished, /health answers 503 "starting".
  // One set of tool server connections (and stdio processes) for the API's catalog and the worker's calls.
  const toolServers = connectToolServers(config.runs.toolServers.servers, { logger });
  // The worker closes them when it stops; this covers a start that fails before the worker runs.
  lifecycle.onStop('tool servers', () => toolServers.close());
  const server = await listen(createStartingApp(config, logger, startup.pending), config.http.host, config.http.port);
  lifecycle.onStop('http server', () => server.close(), { first: true });
  // Migrated (waiting out a database that is down), then served on a socket in DATA_DIR to
  // `npm run keys|credits|tenants` on PGlite; only then is the API composed over it.
  const database = await prepareDatabase(config, lifecycle, opened, { logger, startup });
  server.serve(createApp(composeApi(config, logger, database, handle, { toolServers, starting: startup.pending })));
  warmInboxAssets((err) => logger.warn({ err: err.message }, 'the inbox page could not be bundled; GET /inbox tries again'));

  // The API listens already, so the dev server's UI can be pointed at its codec endpoint.
  startup.at('starting Temporal');
  const temporal = await ensureTemporal(config, logger, lifecycle, startup, config.codecEndpoint.enabled ? { uiCodecEndpoint: `${server.url}/codec` } : {});
  // What start-up waits for below, if it must: the cluster (named by what set its address), or the dev server it started.
  const temporalDep = temporal.uiUrl
    ? { name: 'Temporal', setting: `the dev server on TEMPORAL_DEV_PORT ${config.temporal.devPort}` }
    : temporalDependency(temporal.connection);
  if (!temporal.uiUrl) {
    await startup.waitFor(temporalDep, 'registering search attributes', () =>
      ensureSearchAttributes(handle.connection, config.temporal.connection.namespace, logger),
    );
  }

  const workerOptions: WorkerOptions = {
    temporal: temporal.connection,
    taskQueue: config.temporal.taskQueue,
    activities: activityDeps(config, database.db, { logger, toolServers }),
    payloadCodec: codec,
    logger,
    shutdownGraceMs: config.workerShutdownGraceMs,
    maxCachedWorkflows: config.workerMaxCachedWorkflows,
    temporalMetricsPort: config.metrics?.temporalPort,
    versioning: config.temporal.versioning,
  };
  // Tried again whole if Temporal is unreachable while the worker connects (the worker's native connection
  // fails with a TransportError, before the worker runs): a failure after it ran has closed the tool servers.
  const worker = await startup.waitFor(temporalDep, 'starting the worker', () => startWorker(workerOptions), { retryOn: notConnected });
  lifecycle.onStop('worker', () => worker.stop());
  // Watched from now on: start-up may still wait a while below.
  worker.done.catch((err: Error) => {
    logger.fatal({ err: err.message }, 'worker failed');
    void lifecycle.stop().then(() => process.exit(1));
  });
  if (config.metrics) {
    const metrics = await startMetricsServer({ ...config.metrics, temporalMetricsUrl: `http://127.0.0.1:${config.metrics.temporalPort}/metrics`, logger });
    lifecycle.onStop('metrics server', () => metrics.close());
  }
  await startup.waitFor(temporalDep, 'creating the schedules', async () => {
    await ensureReconcileSchedule(handle.client, config.temporal.taskQueue, config.runs.reconcileIntervalSeconds, logger);
    await ensureJourneyRetentionSchedule(handle.client, config.temporal.taskQueue, logger);
  });

  const keys = await startup.waitFor(DATABASE, 'creating the dev keys', () => ensureDevKeys(database.db, config.runs.devStartingCredits));
  process.stdout.write(banner(server.url, temporal.uiUrl, keys, codec.keyId));
  // Only now does /health answer 200: everything above is done.
  startup.ready();
} catch (err) {
  logger.fatal({ err: (err as Error).message }, 'start-up failed');
  console.error(`\nStart-up failed: ${(err as Error).message}`);
  await lifecycle.stop();
  process.exit(1);
}
