// Creates the Temporal worker: workflows from source in development (bundled
// at start-up) or from the prebuilt bundle in production, activities bound to
// this process's database. Payloads are encrypted with the service's codec.
import { existsSync } from 'node:fs';
import type { PayloadCodec } from '@temporalio/common';
import { releaseActivityStorageWhenIdle } from './activity-storage.ts';
import { DefaultLogger, type LogEntry, makeTelemetryFilterString, NativeConnection, Runtime, Worker, type WorkerInterceptors } from '@temporalio/worker';
import type { Logger } from 'pino';
import { type ActivityDeps, createActivities } from '../activities/index.ts';
import type { VersioningConfig } from '../config/env.ts';
import type { TemporalConnectionSettings } from '../config/temporal-connection-settings.ts';
import { serviceDataConverter } from './payload-codec.ts';
import { temporalConnectOptions } from './temporal-connection.ts';
import { deploymentOptions, promoteFirstBuild, workerBuildId } from './worker-deployment.ts';
import { telemetry } from './telemetry.ts';
import { tracingWorkerOptions, workflowBundleFor, workflowInterceptorModules } from './temporal-tracing.ts';
import { WORKFLOW_PRELOAD_MODULES, WORKFLOWS_PATH } from './workflow-bundle.ts';

const PINO_LEVEL = { TRACE: 'trace', DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error' } as const;

let runtimeInstalled = false;
/**
 * Our own lifecycle handles SIGINT/SIGTERM, so the SDK must not install its
 * handlers; its log lines go to our pino logger (warnings and up), Temporal Core's own
 * included (forwarded from Rust at their own levels, instead of raw lines on stderr).
 */
function installRuntimeOnce(logger: Logger, temporalMetricsPort?: number): void {
  if (runtimeInstalled) return;
  const forward = (entry: LogEntry) => logger[PINO_LEVEL[entry.level]]({ temporal: entry.meta }, entry.message);
  // The SDK's own metrics (workflow and activity task latencies, slots, polls…), for runtime/metrics-server.ts to append.
  const metrics = temporalMetricsPort ? { metrics: { prometheus: { bindAddress: `127.0.0.1:${temporalMetricsPort}`, countersTotalSuffix: true } } } : {};
  const logging = { filter: makeTelemetryFilterString({ core: 'WARN', other: 'WARN' }), forward: {} };
  Runtime.install({ shutdownSignals: [], logger: new DefaultLogger('WARN', forward), telemetryOptions: { logging, ...metrics } });
  runtimeInstalled = true;
}

export interface WorkerOptions {
  /** Where and how to connect (address, TLS, API key, metadata), and the namespace to serve. */
  temporal: TemporalConnectionSettings;
  taskQueue: string;
  activities: ActivityDeps;
  /** Encrypts and decrypts every payload the worker sends to or reads from Temporal. */
  payloadCodec: PayloadCodec;
  logger: Logger;
  /** Path of a bundle built by `npm run build`; when absent, workflows are bundled from source. */
  workflowBundlePath?: string;
  /** How long stop() lets in-flight activities finish before they are cancelled (the SDK's default is 0). */
  shutdownGraceMs?: number;
  /** The sticky cache's size (WORKER_MAX_CACHED_WORKFLOWS); the SDK's heap-sized default when absent. */
  maxCachedWorkflows?: number;
  /** Where the Temporal SDK serves its metrics (only the first worker of a process sets it up). */
  temporalMetricsPort?: number;
  /** Worker interceptors (the fault-injection tests use one to crash after an activity committed). */
  interceptors?: WorkerInterceptors;
  /** Worker Versioning (runtime/worker-deployment.ts); absent or disabled: an unversioned worker. */
  versioning?: VersioningConfig;
}

export interface RunningWorker {
  worker: Worker;
  /** The build this worker serves (its deployment version's build id), when versioned. */
  buildId?: string;
  /** Resolves when the worker has stopped (after drain). */
  done: Promise<void>;
  /** Stops polling, lets running activities finish, then closes the connection. */
  stop(): Promise<void>;
}

export async function startWorker(options: WorkerOptions): Promise<RunningWorker> {
  installRuntimeOnce(options.logger, options.temporalMetricsPort);
  const connection = await NativeConnection.connect(temporalConnectOptions(options.temporal));
  const fromBundle = options.workflowBundlePath !== undefined && existsSync(options.workflowBundlePath);
  // Tracing: activity spans, and the workflow's spans through a sink, from the traced bundle (runtime/temporal-tracing.ts).
  const traced = telemetry().enabled;
  const workflowSource = fromBundle
    ? { workflowBundle: { codePath: workflowBundleFor(options.workflowBundlePath!, traced) } }
    : { workflowsPath: WORKFLOWS_PATH, bundlerOptions: { preloadModules: WORKFLOW_PRELOAD_MODULES } };
  const tracing = tracingWorkerOptions();
  const interceptors: WorkerInterceptors = {
    ...options.interceptors,
    activity: [...tracing.activity, ...(options.interceptors?.activity ?? [])],
    ...(fromBundle ? {} : { workflowModules: workflowInterceptorModules(traced) }),
  };
  // One build id for both variants (the untraced bundle's): turning tracing on or off is not a deploy.
  const buildId = options.versioning?.enabled ? workerBuildId(options.versioning, fromBundle ? options.workflowBundlePath : undefined) : undefined;
  const workerDeploymentOptions = options.versioning && buildId ? deploymentOptions(options.versioning, buildId) : undefined;
  // A worker that cannot be created leaves no connection open (start-up tries again: runtime/startup.ts).
  const worker = await Worker.create({
    connection,
    namespace: options.temporal.namespace,
    taskQueue: options.taskQueue,
    activities: createActivities(options.activities),
    dataConverter: serviceDataConverter(options.payloadCodec),
    shutdownGraceTime: options.shutdownGraceMs ?? 10_000,
    ...(options.maxCachedWorkflows !== undefined ? { maxCachedWorkflows: options.maxCachedWorkflows } : {}),
    interceptors,
    sinks: tracing.sinks,
    ...(workerDeploymentOptions ? { workerDeploymentOptions } : {}),
    ...workflowSource,
  }).catch(async (err: unknown) => {
    await connection.close().catch(() => {});
    throw err;
  });
  // No activity context storage between activities: its hooks would slow every promise of the process (an API beside it, under npm start).
  const storage = releaseActivityStorageWhenIdle(worker, connection);
  // The tool servers' processes stop with the worker: none is left behind.
  const done = worker.run().finally(() => {
    storage.unsubscribe();
    return Promise.all([connection.close(), options.activities.toolServers.close()]).then(() => undefined);
  });
  if (workerDeploymentOptions && buildId) {
    // Polling registers the build in its deployment; the deployment's first build becomes current here.
    const promoted = promoteFirstBuild(connection, {
      namespace: options.temporal.namespace,
      deploymentName: workerDeploymentOptions.version.deploymentName,
      buildId,
      logger: options.logger,
    });
    await Promise.race([promoted, done.then(() => Promise.reject(new Error('The worker stopped before its build was registered.')))]).catch(async (err) => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await done.catch(() => {});
      throw err;
    });
  }
  return {
    worker,
    buildId,
    done,
    async stop() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await done;
    },
  };
}
