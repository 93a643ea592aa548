// Creates the Temporal worker: workflows from source in development (bundled
// at start-up) or from the prebuilt bundle in production, activities bound to
// this process's database.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { createActivities } from '../activities/index.ts';
import type { Db } from '../db/client.ts';
import { projectRoot } from './paths.ts';

let runtimeInstalled = false;
/** Our own lifecycle handles SIGINT/SIGTERM, so the SDK must not install its handlers. */
function installRuntimeOnce(): void {
  if (runtimeInstalled) return;
  Runtime.install({ shutdownSignals: [] });
  runtimeInstalled = true;
}

export interface WorkerOptions {
  address: string;
  namespace: string;
  taskQueue: string;
  db: Db;
  /** Path of a bundle built by `npm run build`; when absent, workflows are bundled from source. */
  workflowBundlePath?: string;
}

export interface RunningWorker {
  worker: Worker;
  /** Resolves when the worker has stopped (after drain). */
  done: Promise<void>;
  /** Stops polling, lets running activities finish, then closes the connection. */
  stop(): Promise<void>;
}

export async function startWorker(options: WorkerOptions): Promise<RunningWorker> {
  installRuntimeOnce();
  const connection = await NativeConnection.connect({ address: options.address });
  const workflowSource =
    options.workflowBundlePath && existsSync(options.workflowBundlePath)
      ? { workflowBundle: { codePath: options.workflowBundlePath } }
      : { workflowsPath: path.join(projectRoot, 'workflows', 'index.ts') };
  const worker = await Worker.create({
    connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    activities: createActivities({ db: options.db }),
    ...workflowSource,
  });
  const done = worker.run().finally(() => connection.close());
  return {
    worker,
    done,
    async stop() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await done;
    },
  };
}
