// Row 13's closed loops (scripts/bench/e2e-loop.ts), one side per process. The timed window of a run
// is its whole life as its client sees it: from its start (the service: POST /v1/agent-runs; the
// anchor: workflow start) to its end, with its approval sent as soon as it waits (the service: the
// run's row says awaiting_approval, then POST …/approval; the anchor: an Update sent at once, which
// returns once the workflow waits). A person's time to decide is not in it.
//   node --import tsx scripts/bench/tools-loop.ts service|anchor '<json>'   (prints a LoopResult)
import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import pg from 'pg';
import { insertRun } from './e2e-anchor-activities.ts';
import { closedLoop, type LoopArgs } from './e2e-loop.ts';
import { createRun, RunWatcher } from './run-watcher.ts';
import type { toolRunAnchorWorkflow } from './tools-workflow.ts';

export interface ToolLoopArgs extends LoopArgs {
  input: string;
  /** The service's side. */
  apiUrl?: string;
  /** A core key: creates the runs. */
  secret?: string;
  /** An approver key of the same tenant: decides their approvals. */
  approverSecret?: string;
  databaseUrl?: string;
  /** The anchor's side. */
  temporalAddress?: string;
  taskQueue?: string;
  /** The anchor in the service's shape (scripts/bench/tools-workflow.ts): its run row is written before its start, as the API writes the service's. */
  shape?: boolean;
}

const mode = process.argv[2];
const a = JSON.parse(process.argv[3]!) as ToolLoopArgs;

async function serviceLoop() {
  const watcher = new RunWatcher(a.databaseUrl!);
  await watcher.open();
  const result = await closedLoop(a, async () => {
    const runId = await createRun(a.apiUrl!, a.secret!, a.input);
    if ((await watcher.reached(runId, ['awaiting_approval', 'completed', 'failed', 'needs_attention'])) !== 'awaiting_approval') return false;
    const res = await fetch(`${a.apiUrl}/v1/agent-runs/${runId}/approval`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.approverSecret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approve' }),
    });
    if (res.status !== 200) return false;
    return (await watcher.reached(runId, ['completed', 'failed', 'needs_attention'])) === 'completed';
  });
  await watcher.close();
  return result;
}

async function anchorLoop() {
  const connection = await Connection.connect({ address: a.temporalAddress! });
  const client = new Client({ connection });
  const pool = a.shape ? new pg.Pool({ connectionString: a.databaseUrl!, max: 2 }) : null;
  const result = await closedLoop(a, async () => {
    const workflowId = `tool_anchor_${randomBytes(12).toString('hex')}`;
    if (pool) await insertRun(pool, workflowId);
    const handle = await client.workflow.start<typeof toolRunAnchorWorkflow>('toolRunAnchorWorkflow', {
      taskQueue: a.taskQueue!,
      workflowId,
      args: [a.input, a.shape ?? false],
    });
    await handle.executeUpdate('approve');
    return (await handle.result()) === 3;
  });
  await pool?.end();
  await connection.close();
  return result;
}

console.log(JSON.stringify(mode === 'service' ? await serviceLoop() : await anchorLoop()));
process.exit(0);
