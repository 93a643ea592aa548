// `npm run drill -- --rollout`: a blue-green deploy while runs wait and work (docs/operations.md, "Deploys").
//
//   1. v1 workers serve. Runs wait at approval; others are mid-execute (a slow receiver) or held in settle
//      (their ledger rows locked: a slow ledger).
//   2. A v2 build starts beside v1 with a change incompatible with v1 histories, unpatched: a new activity
//      before settle (scripts/drill/v2-change.ts).
//   3. v2 is ramped to 10%, new runs are created, then v2 is promoted; the waiting runs are approved and
//      more runs are created.
//   4. v1 is stopped once the server says it has drained; the ledger recovers 5 s into that wait.
//
// With --no-versioning the workers run unversioned: nothing can say when v1 has drained, so v1 stops when
// the drain would begin, the ledger recovering 5 s later as before, and v1's runs held in settle finish on
// v2, replaying histories v2 cannot: the failure the test expects to see.
import { Client, Connection } from '@temporalio/client';
import pg from 'pg';
import { projectRoot } from '../../config/paths.ts';
import { type DeploymentTarget, deploymentStatus, isDrained, promoteBuild, rampBuild } from '../../runtime/deployments.ts';
import { account } from './accounting.ts';
import { Cluster, sleep } from './cluster.ts';
import { type DrillTenant, LoadDriver } from './load.ts';
import { startReceiver } from './receiver.ts';
import { seededRng } from './rng.ts';
import { FAST_DRAINAGE_ARGS } from '../../tests/support/fast-drainage.ts';
import { setUpTenants } from './tenants.ts';

const DEPLOYMENT = 'governed-workspace';
const LEDGER_RECOVERS_AFTER_MS = 5_000;

type Group = 'waiting' | 'settling' | 'executing' | 'ramped' | 'after';

export interface RolloutSummary {
  mode: 'rollout';
  versioning: boolean;
  seed: number;
  elapsed_s: number;
  runs: number;
  by_status: Record<string, number>;
  /** Each group's runs by the build their last execution ran on. */
  builds: Record<Group, Record<string, number>>;
  continued_as_new: number;
  non_determinism_failures: number;
  stuck_runs: number;
  double_effects: number;
  v1_drained: boolean;
  violations: number;
  violation_kinds: Record<string, number>;
}

export async function rolloutDrill(options: { quick: boolean; versioning: boolean; seed: number }): Promise<RolloutSummary> {
  const started = Date.now();
  const n = options.quick
    ? { waiting: 3, settling: 2, executing: 2, ramped: 4, after: 2, v1: 1, v2: 1 }
    : { waiting: 8, settling: 4, executing: 4, ramped: 10, after: 6, v1: 2, v2: 2 };
  const runTimeoutMs = options.quick ? 60_000 : 240_000;
  const workerEnv = (bundle: string) => ({ WORKFLOW_BUNDLE_PATH: bundle, WORKER_VERSIONING: String(options.versioning) });
  const violations: { invariant: string; detail: string }[] = [];
  const violate = (invariant: string, detail: string) => violations.push({ invariant, detail });

  const cluster = await Cluster.start({ apis: 1, workers: 0, temporalArgs: FAST_DRAINAGE_ARGS });
  const stopOnSignal = () => {
    cluster.killAll();
    process.exit(130);
  };
  process.once('SIGINT', stopOnSignal).once('SIGTERM', stopOnSignal);
  console.log(`drill --rollout: cluster up in ${cluster.scratch}; versioning ${options.versioning ? 'on' : 'off'}`);
  const receiver = await startReceiver({ toolDelayMs: 3_000 });
  const [tenant] = (await setUpTenants(cluster.postgres.url, `rollout-${options.seed}`, 1, `${receiver.url}/tool`)) as [DrillTenant];
  const load = new LoadDriver(() => cluster.apiUrls(), seededRng(options.seed), options.seed, 60_000);
  const connection = await Connection.connect({ address: cluster.temporalAddress });
  const target: DeploymentTarget = { connection, namespace: 'default', deploymentName: DEPLOYMENT };
  const db = new pg.Client({ connectionString: cluster.postgres.url });
  await db.connect();
  const groups = new Map<string, Group>();
  let seq = 0;
  const create = async (group: Group, kind: 'approve' | 'analysis') => {
    const runId = await load.create(seq++, kind, tenant);
    if (runId) groups.set(runId, group);
    return runId;
  };
  const createAll = async (group: Group, count: number, kind: 'approve' | 'analysis') =>
    (await Promise.all(Array.from({ length: count }, () => create(group, kind)))).filter((id): id is string => id !== null);

  // 1. v1 serves: runs wait at approval, run (slowly) and settle (held).
  for (let i = 1; i <= n.v1; i++) cluster.spawnService(`v1-worker-${i}`, 'worker', workerEnv(cluster.bundlePath));
  const v1 = options.versioning ? await untilBuild(target, (s) => s.current) : 'v1';
  const waiting = await createAll('waiting', n.waiting, 'approve');
  const settling = await createAll('settling', n.settling, 'approve');
  await Promise.all([...waiting, ...settling].map((id) => load.untilAwaitingApproval(tenant, id, runTimeoutMs)));
  const ledger = await holdLedgerRows(db, settling);
  await Promise.all(settling.map((id) => load.approveRun(tenant, id, runTimeoutMs)));
  await Promise.all(settling.map((id) => load.until(tenant, id, (r) => r.progress?.current_step === 'settle', runTimeoutMs)));
  const executing = await createAll('executing', n.executing, 'approve');
  await Promise.all(executing.map((id) => load.approveRun(tenant, id, runTimeoutMs)));

  // 2. v2 comes up beside v1.
  const v2Bundle = await cluster.buildBundle('workflow-bundle-v2', [`${projectRoot}/scripts/drill/v2-change.ts`]);
  for (let i = 1; i <= n.v2; i++) cluster.spawnService(`v2-worker-${i}`, 'worker', workerEnv(v2Bundle));
  const v2 = options.versioning ? await untilBuild(target, (s) => s.builds.find((b) => b.buildId !== s.current)?.buildId ?? null) : 'v2';
  console.log(`drill --rollout: v1 ${v1}, v2 ${v2}; ${waiting.length} waiting, ${settling.length} in settle, ${executing.length} executing`);

  // 3. Ramp, promote, approve the waiting runs, new runs.
  // v2 is listed once one of its pollers registered; the ramp waits (up to 30 s) until it polls every queue.
  const waitingForWorkers = { onWaitingForWorkers: () => console.log(`drill --rollout: waiting for ${v2}'s workers to poll every task queue`) };
  if (options.versioning) await rampBuild(target, v2, 10, waitingForWorkers);
  await createAll('ramped', n.ramped, 'analysis');
  if (options.versioning) console.log(`drill --rollout: promoted ${v2}; ${await promoteBuild(target, v2, waitingForWorkers)} waiting run(s) nudged`);
  await Promise.all(waiting.map((id) => load.approveRun(tenant, id, runTimeoutMs)));
  const after = await createAll('after', n.after, 'approve');
  await Promise.all(after.map((id) => load.approveRun(tenant, id, runTimeoutMs)));

  // 4. Drain v1; the ledger recovers 5 s in.
  const recovered = sleep(LEDGER_RECOVERS_AFTER_MS).then(() => ledger.release());
  let drained = false;
  if (options.versioning) {
    const deadline = Date.now() + runTimeoutMs;
    while (!drained && Date.now() < deadline) {
      drained = isDrained(await deploymentStatus(target), v1);
      if (!drained) await sleep(1_000);
    }
    if (!drained) violate('v1_not_drained', `${v1} did not drain within ${runTimeoutMs / 1000} s`);
  }
  for (let i = 1; i <= n.v1; i++) await cluster.stopService(`v1-worker-${i}`);
  await recovered;
  await Promise.all([...groups.keys()].map((id) => load.untilEnded(tenant, id, runTimeoutMs)));

  // Accounting: the fault drill's (money, holds, effects, audits, runs and workflows), then versions.
  const accounting = await account({
    databaseUrl: cluster.postgres.url,
    temporalAddress: cluster.temporalAddress,
    tenantIds: [tenant.tenantId],
    load: load.stats,
    receiver,
    faults: [],
    errorLines: [],
  });
  violations.push(...accounting.violations);
  const chains = await executionChains(connection, [...groups.keys()]);
  const builds = { waiting: {}, settling: {}, executing: {}, ramped: {}, after: {} } as RolloutSummary['builds'];
  let nde = 0;
  let continued = 0;
  for (const [runId, chain] of chains) {
    const group = groups.get(runId)!;
    const last = chain.at(-1)?.buildId ?? 'none';
    builds[group][last] = (builds[group][last] ?? 0) + 1;
    nde += chain.reduce((sum, e) => sum + e.nonDeterminism, 0);
    if (chain.length > 1) continued++;
    if (options.versioning) checkBuilds(group, runId, chain, v1, v2, violate);
  }
  if (nde > 0) violate('non_determinism', `${nde} workflow task(s) failed for non-determinism`);
  const doubleEffects = [...receiver.deliveries.values()].filter((c) => c > 1).length;
  if (doubleEffects > 0) violate('double_effect', `${doubleEffects} tool delivery(ies) received more than once`);
  const stuck = Object.entries(accounting.byStatus)
    .filter(([status]) => !['completed', 'failed', 'needs_attention'].includes(status))
    .reduce((sum, [, c]) => sum + c, 0);

  await db.end();
  await connection.close();
  await receiver.close();
  await cluster.stop();
  process.off('SIGINT', stopOnSignal).off('SIGTERM', stopOnSignal);
  const leftBehind = cluster.leftBehind();
  if (leftBehind.length > 0) violate('process_left_behind', leftBehind.join(', '));

  const kinds: Record<string, number> = {};
  for (const v of violations) kinds[v.invariant] = (kinds[v.invariant] ?? 0) + 1;
  const summary: RolloutSummary = {
    mode: 'rollout',
    versioning: options.versioning,
    seed: options.seed,
    elapsed_s: Math.round((Date.now() - started) / 1000),
    runs: accounting.runs,
    by_status: accounting.byStatus,
    builds,
    continued_as_new: continued,
    non_determinism_failures: nde,
    stuck_runs: stuck,
    double_effects: doubleEffects,
    v1_drained: drained,
    violations: violations.length,
    violation_kinds: kinds,
  };
  for (const v of violations.slice(0, 20)) console.log(`violation ${v.invariant}: ${v.detail}`);
  console.log(`runs ${summary.runs} ${JSON.stringify(summary.by_status)}; builds ${JSON.stringify(builds)}`);
  console.log(`continued as new ${continued}, non-determinism ${nde}, stuck ${stuck}, double effects ${doubleEffects}, violations ${violations.length}`);
  console.log(JSON.stringify(summary));
  return summary;
}

/** Waits until `pick` finds a build in the deployment (the workers register theirs when they poll). */
async function untilBuild(target: DeploymentTarget, pick: (s: Awaited<ReturnType<typeof deploymentStatus>>) => string | null): Promise<string> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const found = await deploymentStatus(target)
      .then(pick)
      .catch(() => null);
    if (found) return found;
    if (Date.now() > deadline) throw new Error('drill --rollout: a build did not register within 60 s');
    await sleep(300);
  }
}

/** Locks the runs' ledger holds in an open transaction (a slow ledger): their settle waits until release(). */
async function holdLedgerRows(db: pg.Client, runIds: string[]): Promise<{ release(): Promise<void> }> {
  await db.query('begin');
  await db.query(`select id from ledger_holds where run_id = any($1) and status = 'open' for update`, [runIds]);
  return { release: () => db.query('commit').then(() => undefined) };
}

interface Execution {
  runId: string;
  buildId: string;
  nonDeterminism: number;
}

/** Each run's executions, oldest first: the build each ran on, and its workflow tasks failed for non-determinism. */
async function executionChains(connection: Connection, runIds: string[]): Promise<Map<string, Execution[]>> {
  const client = new Client({ connection });
  const chains = new Map<string, Execution[]>();
  for (const runId of runIds) {
    const chain: Execution[] = [];
    for await (const wf of client.workflow.list({ query: `WorkflowId = '${runId}'` })) {
      const handle = client.workflow.getHandle(runId, wf.runId);
      const history = await handle.fetchHistory();
      const failures = (history.events ?? []).filter(
        (e) => e.workflowTaskFailedEventAttributes && /nondetermin/i.test(e.workflowTaskFailedEventAttributes.failure?.message ?? ''),
      ).length;
      const { raw } = await handle.describe();
      const version = raw.workflowExecutionInfo?.versioningInfo?.deploymentVersion?.buildId ?? 'unversioned';
      chain.push({ runId: wf.runId, buildId: version, nonDeterminism: failures });
    }
    chains.set(runId, chain.reverse());
  }
  return chains;
}

/**
 * What PINNED with upgrade at continue-as-new promises: runs mid-flight on v1 end on v1; runs that waited
 * at approval continue as new onto v2; runs created after the promotion run on v2; ramped runs on either.
 */
function checkBuilds(group: Group, runId: string, chain: Execution[], v1: string, v2: string, violate: (i: string, d: string) => void): void {
  const builds = chain.map((e) => e.buildId);
  const last = builds.at(-1);
  if ((group === 'settling' || group === 'executing') && (builds.length !== 1 || last !== v1))
    violate('wrong_build', `${runId} (${group}) ran on ${builds.join(' → ')}`);
  if (group === 'waiting' && (builds[0] !== v1 || last !== v2)) violate('wrong_build', `${runId} (waiting) ran on ${builds.join(' → ')}, not ${v1} → ${v2}`);
  if (group === 'after' && (builds.length !== 1 || last !== v2)) violate('wrong_build', `${runId} (after) ran on ${builds.join(' → ')}`);
  if (group === 'ramped' && !builds.every((b) => b === v1 || b === v2)) violate('wrong_build', `${runId} (ramped) ran on ${builds.join(' → ')}`);
}
