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
// --waiting N sets how many runs wait at approval (the other groups keep their sizes): the drill then
// times the promote until every one of them is on v2, and counts those moved, left behind and doubled
// (scripts/drill/waiting-move.ts), and how long approving them all takes. Its client keeps to 20 requests
// in flight, and its time-outs grow with N.
//
// With --no-versioning the workers run unversioned: nothing can say when v1 has drained, so v1 stops when
// the drain would begin, the ledger recovering 5 s later as before, and v1's runs held in settle finish on
// v2, replaying histories v2 cannot: the failure the test expects to see.
import { Client, Connection } from '@temporalio/client';
import pg from 'pg';
import { projectRoot } from '../../config/paths.ts';
import { AUDIT_RETENTION_COUNT } from '../../services/audit.ts';
import { type DeploymentTarget, deploymentStatus, isDrained, promoteBuild, rampBuild } from '../../runtime/deployments.ts';
import { temporalConnectOptions } from '../../runtime/temporal-connection.ts';
import { account } from './accounting.ts';
import { Cluster, sleep } from './cluster.ts';
import { type DrillTenant, LoadDriver } from './load.ts';
import { CLIENT_CONCURRENCY, pooled, timeLeft } from './pool.ts';
import { startReceiver } from './receiver.ts';
import { seededRng } from './rng.ts';
import { FAST_DRAINAGE_ARGS } from '../../tests/support/fast-drainage.ts';
import { setUpTenants } from './tenants.ts';
import { type MoveTiming, runsOnBuild, untilAllOnBuild, type WaitingVerdict, waitingVerdict } from './waiting-move.ts';

const DEPLOYMENT = 'governed-workspace';
const LEDGER_RECOVERS_AFTER_MS = 5_000;
/**
 * Time-outs grow by this per waiting run beyond the group's usual size: 1 run/s, well under what a shared
 * 2-core machine measured at c=20 (3-5 runs/s to awaiting_approval, about 4 from approval to completed,
 * 2-3 approvals answered): a time-out only ends a drill that is failing anyway.
 */
const MS_PER_EXTRA_WAITING_RUN = 1_000;
/**
 * A tenant keeps its last AUDIT_RETENTION_COUNT audit events (services/audit.ts) and every approval writes
 * one: the waiting runs are spread over tenants of at most this many, so that the accounting still finds
 * each decision's record. One tenant unless --waiting is large.
 */
const WAITING_PER_TENANT = AUDIT_RETENTION_COUNT / 2;

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
  /** The waiting group through the promote (versioning only). */
  waiting_move: WaitingMove | null;
  violations: number;
  violation_kinds: Record<string, number>;
}

export interface WaitingMove {
  n: number;
  /** From the first create until the waiting (and settling) runs all awaited approval on v1. */
  to_awaiting_approval_s: number;
  /** Already on v2 when the promote was called (the 10% ramp moves its share). */
  on_v2_at_promote: number;
  /** From the promote call until it returned (its nudge passes). */
  promote_s: number;
  /** Signals its nudge passes sent (the reconciler nudges runs left on an unrouted build too, every RECONCILE_INTERVAL_SECONDS). */
  nudged_by_promote: number;
  /** From the promote call until every waiting run was on v2 (waiting-move.ts says what that means); null: some never were. */
  all_on_v2_s: number | null;
  moved: number;
  left_behind: number;
  doubled: number;
  /** From the first approval until every waiting run's approval was answered 200. */
  approve_all_s: number;
  /** From the first approval until the last waiting run completed (runs.completed_at). */
  approved_to_completed_s: number | null;
}

export async function rolloutDrill(options: { quick: boolean; versioning: boolean; seed: number; waiting?: number }): Promise<RolloutSummary> {
  const started = Date.now();
  const n = options.quick
    ? { waiting: 3, settling: 2, executing: 2, ramped: 4, after: 2, v1: 1, v2: 1 }
    : { waiting: 8, settling: 4, executing: 4, ramped: 10, after: 6, v1: 2, v2: 2 };
  const extraWaiting = Math.max(0, (options.waiting ?? n.waiting) - n.waiting);
  n.waiting = options.waiting ?? n.waiting;
  const runTimeoutMs = (options.quick ? 60_000 : 240_000) + extraWaiting * MS_PER_EXTRA_WAITING_RUN;
  const tenantOf = new Map<string, DrillTenant>();
  // Group-wide work at the client's concurrency; a group's waits share one deadline.
  const each = <T>(ids: string[], work: (id: string, tenant: DrillTenant, timeoutMs: number) => Promise<T>) => {
    const left = timeLeft(runTimeoutMs);
    return pooled(ids, CLIENT_CONCURRENCY, (id) => work(id, tenantOf.get(id)!, left()));
  };
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
  const tenantCount = Math.ceil(n.waiting / WAITING_PER_TENANT);
  const tenants = await setUpTenants(cluster.postgres.url, `rollout-${options.seed}`, tenantCount, `${receiver.url}/tool`);
  const load = new LoadDriver(() => cluster.apiUrls(), seededRng(options.seed), options.seed, 60_000);
  const connection = await Connection.connect(temporalConnectOptions(cluster.temporalConnection));
  const target: DeploymentTarget = { connection, namespace: cluster.temporalConnection.namespace, deploymentName: DEPLOYMENT };
  const db = new pg.Client({ connectionString: cluster.postgres.url });
  await db.connect();
  const groups = new Map<string, Group>();
  let seq = 0;
  let waitingCreated = 0;
  const create = async (group: Group, kind: 'approve' | 'analysis') => {
    const tenant = group === 'waiting' ? tenants[waitingCreated++ % tenants.length]! : tenants[0]!;
    const runId = await load.create(seq++, kind, tenant);
    if (runId) {
      groups.set(runId, group);
      tenantOf.set(runId, tenant);
    }
    return runId;
  };
  const createAll = async (group: Group, count: number, kind: 'approve' | 'analysis') =>
    (await pooled(Array.from({ length: count }), CLIENT_CONCURRENCY, () => create(group, kind))).filter((id): id is string => id !== null);

  // 1. v1 serves: runs wait at approval, run (slowly) and settle (held).
  for (let i = 1; i <= n.v1; i++) cluster.spawnService(`v1-worker-${i}`, 'worker', workerEnv(cluster.bundlePath));
  const v1 = options.versioning ? await untilBuild(target, (s) => s.current) : 'v1';
  const creatingStarted = Date.now();
  const waiting = await createAll('waiting', n.waiting, 'approve');
  const settling = await createAll('settling', n.settling, 'approve');
  await each([...waiting, ...settling], (id, tenant, ms) => load.untilAwaitingApproval(tenant, id, ms));
  const toApprovalMs = Date.now() - creatingStarted;
  const ledger = await holdLedgerRows(db, settling);
  await each(settling, (id, tenant, ms) => load.approveRun(tenant, id, ms));
  await each(settling, (id, tenant, ms) => load.until(tenant, id, (r) => r.progress?.current_step === 'settle', ms));
  const executing = await createAll('executing', n.executing, 'approve');
  await each(executing, (id, tenant, ms) => load.approveRun(tenant, id, ms));

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
  const waitingIds = new Set(waiting);
  const onV2AtPromote = options.versioning ? (await runsOnBuild(target, v2, waitingIds)).size : 0;
  const promotedAt = Date.now();
  const moving = options.versioning ? untilAllOnBuild(target, v2, waitingIds, promotedAt, runTimeoutMs) : null;
  const nudged = options.versioning ? await promoteBuild(target, v2, waitingForWorkers) : 0;
  if (options.versioning) console.log(`drill --rollout: promoted ${v2}; ${nudged} waiting run(s) nudged`);
  const promoteMs = Date.now() - promotedAt;
  const move = await moving;
  if (move) console.log(`drill --rollout: ${move.moved.size} of ${waiting.length} waiting run(s) on ${v2} ${secondsAfterPromote(move)}`);
  const approvalsStarted = Date.now();
  await each(waiting, (id, tenant, ms) => load.approveRun(tenant, id, ms));
  const approveAllMs = Date.now() - approvalsStarted;
  const after = await createAll('after', n.after, 'approve');
  await each(after, (id, tenant, ms) => load.approveRun(tenant, id, ms));

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
  await each([...groups.keys()], (id, tenant, ms) => load.untilEnded(tenant, id, ms));
  const waitingCompletedAt = await lastCompleted(db, waiting);

  // Accounting: the fault drill's (money, holds, effects, audits, runs and workflows), then versions.
  const accounting = await account({
    databaseUrl: cluster.postgres.url,
    temporal: cluster.temporalConnection,
    tenantIds: tenants.map((t) => t.tenantId),
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
  const waitingMove = move && {
    n: n.waiting,
    to_awaiting_approval_s: seconds(toApprovalMs),
    on_v2_at_promote: onV2AtPromote,
    promote_s: seconds(promoteMs),
    nudged_by_promote: nudged,
    all_on_v2_s: move.allMovedMs === null ? null : seconds(move.allMovedMs),
    ...countVerdict(waitingVerdict({ waiting, chains, movedInTime: move.moved, deliveries: receiver.deliveries, v1, v2 }), violate),
    approve_all_s: seconds(approveAllMs),
    approved_to_completed_s: waitingCompletedAt === null ? null : seconds(waitingCompletedAt - approvalsStarted),
  };
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
    waiting_move: waitingMove,
    violations: violations.length,
    violation_kinds: kinds,
  };
  for (const v of violations.slice(0, 20)) console.log(`violation ${v.invariant}: ${v.detail}`);
  console.log(`runs ${summary.runs} ${JSON.stringify(summary.by_status)}; builds ${JSON.stringify(builds)}`);
  if (waitingMove) console.log(waitingLine(waitingMove, v2));
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

const seconds = (ms: number) => Math.round(ms / 100) / 10;

function secondsAfterPromote(move: MoveTiming): string {
  return move.allMovedMs === null ? 'when the time ran out' : `${seconds(move.allMovedMs)} s after the promote call`;
}

/** The verdict's counts; a run left behind or doubled is a violation (a few run ids named). */
function countVerdict(verdict: WaitingVerdict, violate: (i: string, d: string) => void): Pick<WaitingMove, 'moved' | 'left_behind' | 'doubled'> {
  const some = (ids: string[]) => `${ids.length} waiting run(s), e.g. ${ids.slice(0, 5).join(', ')}`;
  if (verdict.leftBehind.length > 0) violate('waiting_left_behind', `${some(verdict.leftBehind)}: not on the new build`);
  if (verdict.doubled.length > 0) violate('waiting_doubled', `${some(verdict.doubled)}: continued twice or a delivery received twice`);
  return { moved: verdict.moved.length, left_behind: verdict.leftBehind.length, doubled: verdict.doubled.length };
}

function waitingLine(w: WaitingMove, v2: string): string {
  const onV2 = w.all_on_v2_s === null ? `not all on ${v2}` : `all on ${v2} ${w.all_on_v2_s} s after the promote call`;
  return (
    `waiting ${w.n} (awaiting approval in ${w.to_awaiting_approval_s} s): ${onV2} (${w.on_v2_at_promote} already there by the ramp; promote returned in ${w.promote_s} s, nudged ${w.nudged_by_promote}); ` +
    `moved ${w.moved}, left behind ${w.left_behind}, doubled ${w.doubled}; ` +
    `approve-all ${w.approve_all_s} s, approved to completed ${w.approved_to_completed_s ?? '-'} s`
  );
}

/** When the last of the runs completed (Postgres's completed_at), or null when one has not. */
async function lastCompleted(db: pg.Client, runIds: string[]): Promise<number | null> {
  const { rows } = await db.query<{ last: Date | null; open: string }>(
    'select max(completed_at) as last, count(*) filter (where completed_at is null) as open from runs where id = any($1)',
    [runIds],
  );
  return rows[0]!.last && Number(rows[0]!.open) === 0 ? rows[0]!.last.getTime() : null;
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
  // A thousand waiting runs take minutes one after the other.
  const chains = await pooled(runIds, CLIENT_CONCURRENCY, (runId) => executionChain(client, runId));
  return new Map(runIds.map((runId, i) => [runId, chains[i]!]));
}

async function executionChain(client: Client, runId: string): Promise<Execution[]> {
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
  return chain.reverse();
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
