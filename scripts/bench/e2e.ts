// Row 11: runs end to end against raw Temporal. The service's side is its production split, an API
// (bin/api.ts) and a worker (bin/worker.ts) on a task queue of their own, running analysis runs on the
// local provider, created over HTTP at c=20 and each awaited to its end (scripts/bench/e2e-service.ts).
// The anchor is a raw workflow of the same activities, local activities and Postgres write
// transactions, on its own bare worker, started and awaited by a plain client at c=20
// (scripts/bench/e2e-anchor.ts, e2e-workflow.ts). First both sides' per-run counts are taken
// (scripts/bench/e2e-counts.ts; also their warm-up), then runs/s are compared as the other rows are.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AnchorRunArgs } from './e2e-anchor.ts';
import type { CountArgs, RunCounts } from './e2e-counts.ts';
import { type CpuPerRun, cpuLine, postmasterPid, withCpu } from './e2e-cpu.ts';
import type { LoopArgs } from './e2e-loop.ts';
import type { ServiceRunArgs } from './e2e-service.ts';
import { POOL_SIZE, runJsonChild, type Server, startApi } from './processes.ts';
import { atLeast, type LoadResult, type Row } from './report.ts';
import { RUN_INPUT, type SeededTenant } from './seed.ts';
import { bundleWorkflows, startAnchorWorker, startServiceWorker } from './workers.ts';
import { FOOTPRINT_PARTS, type FootprintPart } from './e2e-workflow.ts';

const CONCURRENCY = 20;
const SERVICE_QUEUE = 'bench-e2e';
const ANCHOR_QUEUE = 'bench-e2e-anchor';
/** The activities of an analysis run besides its tool steps: estimate, reserve, plan, verify, settle. */
const FIXED_ACTIVITIES = 5;
const E2E_TARGET = `11. Runs end to end (analysis, local) c=${CONCURRENCY} vs raw Temporal, same activities and writes`;

/**
 * BENCH_E2E_VARIANT=<parts>, a comma-separated subset of payloads, attributes, summary and timeouts:
 * instead of the service, the anchor carrying those parts of the service's Temporal footprint
 * (scripts/bench/e2e-workflow.ts), against the plain anchor, alternating as the row does: what they cost
 * raw Temporal. A measurement, not a target.
 */
function footprintFromEnv(): FootprintPart[] | null {
  const v = process.env.BENCH_E2E_VARIANT;
  if (!v) return null;
  const parts = v.split(',').map((p) => p.trim());
  const unknown = parts.filter((p) => !(FOOTPRINT_PARTS as readonly string[]).includes(p));
  if (unknown.length) throw new Error(`BENCH_E2E_VARIANT takes a comma-separated subset of ${FOOTPRINT_PARTS.join(', ')}; not ${JSON.stringify(unknown)}`);
  return parts as FootprintPart[];
}

export interface E2eContext {
  databaseUrl: string;
  temporalAddress: string;
  temporalPid: number;
  payloadKey: string;
  tenant: SeededTenant;
  quick: boolean;
  warmupSeconds: number;
  seconds: number;
  alternate(name: string, a: () => Promise<LoadResult>, b: () => Promise<LoadResult>): Promise<{ a: LoadResult; b: LoadResult }>;
  log(s: string): void;
}

/** The processes of both sides, started together and stopped together. */
async function startSides(ctx: E2eContext, dir: string): Promise<Server[]> {
  const bundles = await bundleWorkflows(dir);
  const settings = { databaseUrl: ctx.databaseUrl, temporalAddress: ctx.temporalAddress, payloadKey: ctx.payloadKey, taskQueue: SERVICE_QUEUE };
  const started = await Promise.allSettled([
    startApi({ ...settings, name: 'api-e2e', env: { DEFAULT_PROVIDER: 'local' } }),
    startServiceWorker({ ...settings, bundlePath: bundles.service }),
    startAnchorWorker({ temporalAddress: ctx.temporalAddress, taskQueue: ANCHOR_QUEUE, databaseUrl: ctx.databaseUrl, bundlePath: bundles.anchor }),
  ]);
  const servers = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) {
    await Promise.all(servers.map((s) => s.stop()));
    throw failed.reason;
  }
  return servers;
}

/** What a run costs on each side, per run: the row's note. */
function countsNote(s: RunCounts, a: RunCounts): string {
  const both = (label: string, k: keyof RunCounts) => `${s[k]} vs ${a[k]} ${label}`;
  return [
    `per run, service vs anchor: ${both('activities', 'activities')}, ${both('local activities', 'localActivities')}, ${both('workflow tasks', 'workflowTasks')}, ${both('Postgres write transactions', 'writeTransactions')}, ${both('history events', 'events')}`,
    `service only: ${s.transitions} state changes (${s.statuses?.join(' → ')}), ${s.upserts} search-attribute upserts, ${s.patchMarkers} patch markers`,
  ].join('; ');
}

/** Warns when the anchor's shape is not the service's: the comparison would not be like for like. */
function checkShape(s: RunCounts, a: RunCounts, log: (s: string) => void): void {
  for (const k of ['activities', 'localActivities', 'workflowTasks', 'writeTransactions'] as const) {
    if (Math.abs(s[k] - a[k]) >= 1) log(`e2e: WARNING the anchor's ${k} per run (${a[k]}) differ from the service's (${s[k]})`);
  }
}

/** Both sides' per-run counts (also their warm-up); the anchor takes as many tool steps as the service's run has. */
async function countBoth(ctx: E2eContext, service: ServiceRunArgs): Promise<{ anchor: AnchorRunArgs; note: string; counts: Record<string, RunCounts> }> {
  const count: CountArgs = { databaseUrl: ctx.databaseUrl, temporalAddress: ctx.temporalAddress, runs: ctx.quick ? 3 : 10 };
  const serviceCounts = await runJsonChild<RunCounts>('e2e-service.ts', { ...service, ...count }, {}, ['counts']);
  const anchor: AnchorRunArgs = {
    temporalAddress: ctx.temporalAddress,
    taskQueue: ANCHOR_QUEUE,
    databaseUrl: ctx.databaseUrl,
    poolSize: POOL_SIZE,
    toolSteps: serviceCounts.activities - FIXED_ACTIVITIES,
  };
  const anchorCounts = await runJsonChild<RunCounts>('e2e-anchor.ts', { ...anchor, ...count }, {}, ['counts'], 'under-test');
  const note = countsNote(serviceCounts, anchorCounts);
  ctx.log(`e2e: ${note}`);
  checkShape(serviceCounts, anchorCounts, ctx.log);
  return { anchor, note, counts: { service: serviceCounts, anchor: anchorCounts } };
}

export async function e2eRow(ctx: E2eContext): Promise<Row> {
  const footprint = footprintFromEnv();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gws-bench-e2e-'));
  const servers = await startSides(ctx, dir);
  try {
    const [api, worker, anchorWorker] = servers;
    const service: ServiceRunArgs = {
      apiUrl: api!.url,
      secret: ctx.tenant.secret,
      databaseUrl: ctx.databaseUrl,
      input: RUN_INPUT,
      endStatus: 'needs_attention',
    };
    const { anchor, note, counts } = await countBoth(ctx, service);
    const loop: LoopArgs = { concurrency: CONCURRENCY, warmupSeconds: ctx.warmupSeconds, seconds: ctx.seconds };
    const shared = { temporal: ctx.temporalPid, postgres: await postmasterPid(ctx.databaseUrl) };
    const cpu = { service: [] as CpuPerRun[], anchor: [] as CpuPerRun[] };
    const anchorLoop = (args: AnchorRunArgs, into: CpuPerRun[]) => () =>
      withCpu({ worker: anchorWorker!.pid }, shared, () => runJsonChild('e2e-anchor.ts', { ...args, ...loop }, {}, ['loop'], 'under-test'), into);
    const runs = await ctx.alternate(
      'e2e',
      footprint
        ? anchorLoop({ ...anchor, footprint, input: RUN_INPUT }, cpu.service)
        : () =>
            withCpu({ api: api!.pid, worker: worker!.pid }, shared, () => runJsonChild('e2e-service.ts', { ...service, ...loop }, {}, ['loop']), cpu.service),
      anchorLoop(anchor, cpu.anchor),
    );
    const own = footprint ? ['worker'] : ['api', 'worker'];
    const variant = footprint && `the anchor with the service's ${footprint.join(', ')}`;
    const cpuNote = `CPU ms per run, ${variant ?? 'service'}: ${cpuLine(cpu.service, own)}; anchor: ${cpuLine(cpu.anchor, ['worker'])} (the anchor's driver is its client)`;
    ctx.log(`e2e: ${cpuNote}`);
    const failed = runs.a.failed + runs.b.failed;
    const row = variant
      ? atLeast(`11 (variant). ${variant} vs the plain anchor, c=${CONCURRENCY}`, 'runs/s', runs.a.rps, runs.b.rps, 0, failed)
      : atLeast(E2E_TARGET, 'runs/s', runs.a.rps, runs.b.rps, 0.8, failed);
    const phases = `phases of ${loop.warmupSeconds} s warm-up + ${loop.seconds} s measured, then drained`;
    return { ...row, note: `${note}; ${cpuNote}; ${phases}`, detail: { ...counts, cpuPerRun: cpu } };
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  }
}
