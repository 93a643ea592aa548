// Row 11's anchor side: a plain Temporal client (default data converter, no search attributes or
// metadata) that writes each run's row, as the API does before it starts a run, then starts the raw
// workflow of scripts/bench/e2e-workflow.ts and awaits its result; on a task queue the anchor's own
// worker polls (scripts/bench/e2e-anchor-worker.ts). A variant carrying `attributes` or `summary` starts
// each run with the service's search attributes or summary, as the API does (services/run-workflow.ts).
//   node --import tsx scripts/bench/e2e-anchor.ts loop|counts '<json>'   (prints a LoadResult, or RunCounts)
import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import pg from 'pg';
import { insertRun } from './e2e-anchor-activities.ts';
import { type CountArgs, countRuns } from './e2e-counts.ts';
import { closedLoop, type LoopArgs } from './e2e-loop.ts';
import { RunStatusKey, TenantIdKey } from '../../domain/runs/search-attributes.ts';
import type { RunRow } from '../../services/runs.ts';
import { runSummary } from '../../services/run-workflow.ts';
import type { anchorRunWorkflow, FootprintPart } from './e2e-workflow.ts';

export interface AnchorRunArgs {
  temporalAddress: string;
  taskQueue: string;
  databaseUrl: string;
  poolSize: number;
  toolSteps: number;
  footprint?: FootprintPart[];
  /** The service's run text, which the `summary` part is made from as the API makes it. */
  input?: string;
}

const mode = process.argv[2];
const a = JSON.parse(process.argv[3]!) as AnchorRunArgs & LoopArgs & CountArgs;
const pool = new pg.Pool({ connectionString: a.databaseUrl, max: a.poolSize });
const connection = await Connection.connect({ address: a.temporalAddress });
const client = new Client({ connection });

/** The start options the API adds (services/run-workflow.ts) for the parts carried: its two search attributes, the run's summary. */
function asTheApiStarts(runId: string, footprint: FootprintPart[], input: string) {
  const tenantId = 'ten_bench_anchor';
  const row = { id: runId, tenantId, input, memory: false, model: 'svc-workspace' } as RunRow;
  const attributes = [
    { key: TenantIdKey, value: tenantId },
    { key: RunStatusKey, value: 'accepted' },
  ];
  return {
    ...(footprint.includes('summary') ? runSummary(row, 'bench') : {}),
    ...(footprint.includes('attributes') ? { typedSearchAttributes: attributes } : {}),
  };
}

/** One run: its row, its workflow started, its result awaited; answers the workflow id. */
async function oneRun(): Promise<string> {
  const runId = `anchor_${randomBytes(12).toString('hex')}`;
  await insertRun(pool, runId);
  const handle = await client.workflow.start<typeof anchorRunWorkflow>('anchorRunWorkflow', {
    taskQueue: a.taskQueue,
    workflowId: runId,
    args: [{ runId, toolSteps: a.toolSteps, footprint: a.footprint }],
    ...asTheApiStarts(runId, a.footprint ?? [], a.input ?? ''),
  });
  await handle.result();
  return runId;
}

const result =
  mode === 'counts'
    ? await countRuns(a, oneRun)
    : await closedLoop(a, async () => {
        await oneRun();
        return true;
      });
await connection.close();
await pool.end();
console.log(JSON.stringify(result));
process.exit(0);
