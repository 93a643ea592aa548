// Row 11's anchor worker: a bare Temporal SDK worker (default options, default data converter, no
// interceptors) for the raw workflow of scripts/bench/e2e-workflow.ts, prebundled by the bench, and its
// activities' Postgres pool. Logs "anchor worker running" once it polls; stops on SIGTERM.
//   node --import tsx scripts/bench/e2e-anchor-worker.ts '<json AnchorWorkerArgs>'
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import pg from 'pg';
import { anchorActivities, SCRATCH_TABLES } from './e2e-anchor-activities.ts';

export interface AnchorWorkerArgs {
  temporalAddress: string;
  taskQueue: string;
  databaseUrl: string;
  poolSize: number;
  bundlePath: string;
}

const a = JSON.parse(process.argv[2]!) as AnchorWorkerArgs;
// Warnings only, as the service's worker logs (runtime/worker.ts), and the bench handles SIGTERM.
Runtime.install({ logger: new DefaultLogger('WARN'), shutdownSignals: [] });
const pool = new pg.Pool({ connectionString: a.databaseUrl, max: a.poolSize });
await pool.query(SCRATCH_TABLES);
const worker = await Worker.create({
  connection: await NativeConnection.connect({ address: a.temporalAddress }),
  taskQueue: a.taskQueue,
  workflowBundle: { codePath: a.bundlePath },
  activities: anchorActivities(pool),
});
process.once('SIGTERM', () => worker.shutdown());
console.log('anchor worker running');
await worker.run();
await pool.end();
process.exit(0);
