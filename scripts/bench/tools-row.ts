// Row 13: a tool-calling run on the scripted model (scripts/bench/tools-script.ts: two read calls, one
// approved external call, the report) through the service's production split, an API and a worker on
// a task queue of their own, against a raw Temporal workflow that makes the same model turns and tool
// calls as activities and waits for an approval Update the same way (scripts/bench/tools-workflow.ts),
// on its own bare worker. Both loops (scripts/bench/tools-loop.ts) run at c=CONCURRENCY, alternating
// as every row does. The note lists what the service does per model turn that the anchor does not.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode } from '@temporalio/worker';
import { projectRoot } from '../../config/paths.ts';
import { withoutUserTemporalSettings } from '../../config/temporal-env.ts';
import { openPostgres } from '../../db/client.ts';
import { BUNDLER_LOGGER, bundleServiceWorkflows } from '../../runtime/workflow-bundle.ts';
import { setWebhookUrl } from '../../services/tenants.ts';
import type { E2eContext } from './e2e.ts';
import type { ToolLoopArgs } from './tools-loop.ts';
import { POOL_SIZE, runJsonChild, type Server, startApi, startLoggingChild } from './processes.ts';
import { atLeast, type Row } from './report.ts';
import { benchTenant } from './seed.ts';
import { TOOL_RUN_INPUT, startToolScript } from './tools-script.ts';
import type { ToolAnchorWorkerArgs } from './tools-anchor-worker.ts';
import { startServiceWorker } from './workers.ts';

const CONCURRENCY = 10;
const SERVICE_QUEUE = 'bench-tools';
const ANCHOR_QUEUE = 'bench-tools-anchor';
const TURNS = 3;
const TARGET = `13. Tool-calling run (scripted model: 2 reads, 1 approved call, report) c=${CONCURRENCY} vs raw Temporal of the same turns and calls in the run's shape`;

/** What one workflow's history holds: its activities, local activities (markers), workflow tasks and events. */
async function historyCounts(client: Client, workflowId: string) {
  const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const count = (k: string) => events.filter((e) => (e as Record<string, unknown>)[k]).length;
  return {
    activities: count('activityTaskScheduledEventAttributes'),
    localActivities: count('markerRecordedEventAttributes'),
    workflowTasks: count('workflowTaskCompletedEventAttributes'),
    events: events.length,
  };
}

/** A run of `workflowType` on `taskQueue` that ended, by the visibility list (the loops start and end many). */
async function lastClosed(client: Client, taskQueue: string, workflowType: string): Promise<string | null> {
  const query = `TaskQueue = '${taskQueue}' AND WorkflowType = '${workflowType}' AND ExecutionStatus = 'Completed'`;
  for await (const w of client.workflow.list({ query })) return w.workflowId;
  return null;
}

/**
 * BENCH_TOOLS_ANCHOR: `shape` (the default), the anchor in the service's run's shape, as row 11's is;
 * `calls`, the turns and calls alone, so the row measures everything the service does besides them.
 */
function anchorShape(): boolean {
  const v = process.env.BENCH_TOOLS_ANCHOR ?? 'shape';
  if (v !== 'shape' && v !== 'calls') throw new Error(`BENCH_TOOLS_ANCHOR takes shape or calls; not ${JSON.stringify(v)}`);
  return v === 'shape';
}

export async function toolRunRow(ctx: E2eContext): Promise<Row> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gws-bench-tools-'));
  const script = await startToolScript();
  const database = openPostgres(ctx.databaseUrl, POOL_SIZE);
  const servers: Server[] = [];
  const connection = await Connection.connect({ address: ctx.temporalAddress });
  try {
    const tenant = await benchTenant(database.db, `bench-tools-${Date.now()}`);
    await setWebhookUrl(database.db, tenant.name, script.hookUrl, { allowLoopback: true });
    const servicePath = path.join(dir, 'workflow-bundle.js');
    writeFileSync(servicePath, await bundleServiceWorkflows());
    const anchorPath = path.join(dir, 'tools-anchor-bundle.js');
    writeFileSync(
      anchorPath,
      (await bundleWorkflowCode({ workflowsPath: path.join(projectRoot, 'scripts', 'bench', 'tools-workflow.ts'), logger: BUNDLER_LOGGER })).code,
    );
    const upstream = { DEFAULT_PROVIDER: 'upstream', UPSTREAM_BASE_URL: script.upstreamUrl, UPSTREAM_MODEL_MAP: '{"svc-workspace":"bench"}' };
    const settings = { databaseUrl: ctx.databaseUrl, temporalAddress: ctx.temporalAddress, payloadKey: ctx.payloadKey, taskQueue: SERVICE_QUEUE };
    const anchorArgs: ToolAnchorWorkerArgs = {
      temporalAddress: ctx.temporalAddress,
      taskQueue: ANCHOR_QUEUE,
      bundlePath: anchorPath,
      upstreamUrl: script.upstreamUrl,
      hookUrl: script.hookUrl,
      databaseUrl: ctx.databaseUrl,
      poolSize: POOL_SIZE,
    };
    const anchorEnv = { ...withoutUserTemporalSettings({ PATH: process.env.PATH, HOME: process.env.HOME }), NODE_ENV: 'production' };
    servers.push(
      ...(await Promise.all([
        startApi({ ...settings, name: 'api-tools', env: upstream }),
        // Development: production sends no delivery to loopback, where the bench's receiver is.
        startServiceWorker({ ...settings, name: 'worker-tools', bundlePath: servicePath, env: { ...upstream, NODE_ENV: 'development' } }),
        startLoggingChild(
          'tools-anchor-worker',
          [path.join(projectRoot, 'scripts', 'bench', 'tools-anchor-worker.ts'), JSON.stringify(anchorArgs)],
          anchorEnv,
          (line) => line.includes('anchor worker running'),
        ),
      ])),
    );
    const api = servers[0]!;
    const loop = { concurrency: CONCURRENCY, warmupSeconds: ctx.warmupSeconds, seconds: ctx.seconds };
    const service: ToolLoopArgs = {
      ...loop,
      input: TOOL_RUN_INPUT,
      apiUrl: api.url,
      secret: tenant.secret,
      approverSecret: tenant.approverSecret,
      databaseUrl: ctx.databaseUrl,
    };
    const anchor: ToolLoopArgs = {
      ...loop,
      input: TOOL_RUN_INPUT,
      temporalAddress: ctx.temporalAddress,
      taskQueue: ANCHOR_QUEUE,
      databaseUrl: ctx.databaseUrl,
      shape: anchorShape(),
    };
    const runs = await ctx.alternate(
      'tools',
      () => runJsonChild('tools-loop.ts', service, {}, ['service']),
      () => runJsonChild('tools-loop.ts', anchor, {}, ['anchor']),
    );
    const client = new Client({ connection });
    const [s, a] = await Promise.all([lastClosed(client, SERVICE_QUEUE, 'agentRunWorkflow'), lastClosed(client, ANCHOR_QUEUE, 'toolRunAnchorWorkflow')]);
    const [sc, ac] = await Promise.all([s ? historyCounts(client, s) : null, a ? historyCounts(client, a) : null]);
    const perTurn = (x: number, y: number) => `${(x / TURNS).toFixed(1)} vs ${(y / TURNS).toFixed(1)}`;
    const note =
      sc && ac
        ? `anchor ${anchorShape() ? "in the run's shape (row 11's method)" : 'of the turns and calls alone'}; per model turn (${TURNS} a run), service vs anchor: ${perTurn(sc.activities, ac.activities)} activities, ${perTurn(sc.localActivities, ac.localActivities)} local activities (the service's projection, journey and ledger writes), ${perTurn(sc.workflowTasks, ac.workflowTasks)} workflow tasks, ${perTurn(sc.events, ac.events)} history events; timed from the start to the end, the approval sent as soon as the run waits`
        : 'no finished run to count';
    ctx.log(`tools: ${note}`);
    return { ...atLeast(TARGET, 'runs/s', runs.a.rps, runs.b.rps, 0.8, runs.a.failed + runs.b.failed), note, detail: { service: sc, anchor: ac } };
  } finally {
    await Promise.all(servers.map((x) => x.stop()));
    await connection.close();
    await database.close();
    await script.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
