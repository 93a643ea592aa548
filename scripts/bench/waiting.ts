// Row 12: many runs waiting on the production split. An API (bin/api.ts) and a worker (bin/worker.ts)
// of their own, on the local provider; `npm run scale` (scripts/scale.ts) brings N runs to
// awaiting_approval at c=20, reads both processes' settled memory, lists the waiting runs, opens idle
// followers, then approves every run at c=20 and counts each delivery. The bounds are the issue's own
// (memory per waiting run, list time, each delivery once), not ratios: what is measured is what
// grows with the waiting runs. Opt-in (BENCH_ONLY=waiting): 10,000 runs took 27 min on 2 cores.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openPostgres } from '../../db/client.ts';
import { runJsonChild, startApi } from './processes.ts';
import { type Row, withinLimit } from './report.ts';
import { benchTenant } from './seed.ts';
import { bundleWorkflows, startServiceWorker } from './workers.ts';

const QUEUE = 'bench-waiting';

export interface WaitingContext {
  databaseUrl: string;
  temporalAddress: string;
  payloadKey: string;
  /** Runs brought to awaiting_approval (BENCH_WAITING, 10,000). */
  waiting: number;
  /** Idle followers among them (500, or all when fewer). */
  followers: number;
  log(s: string): void;
}

/** What scripts/scale.ts prints. */
interface ScaleReport {
  to_waiting_runs_per_s: number;
  rss_mib: Record<string, number>;
  kib_per_waiting_run: { from_warm_idle: number; each_added_after_the_first_tenth: number };
  list_ms_median: number;
  idle_followers_tx_per_s: number;
  kib_per_follower: number;
  approvals_failed: number;
  approved_runs_per_s: number;
  end_event_lag_ms: { median: number; p99: number; missed: number };
  deliveries: { exactly_once: number; missing: number; doubled: number };
}

export async function waitingRows(ctx: WaitingContext): Promise<Row[]> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gws-bench-waiting-'));
  const settings = { databaseUrl: ctx.databaseUrl, temporalAddress: ctx.temporalAddress, payloadKey: ctx.payloadKey, taskQueue: QUEUE };
  const { service: bundlePath } = await bundleWorkflows(dir);
  const [api, worker] = await Promise.all([
    startApi({ ...settings, name: 'api-waiting', env: { DEFAULT_PROVIDER: 'local' } }),
    // The receiver of the deliveries is on loopback, which production refuses to send to: the same
    // worker (bin/worker.ts, prebuilt bundle) with NODE_ENV=development, for that rule alone.
    startServiceWorker({ ...settings, name: 'worker-waiting', bundlePath, env: { NODE_ENV: 'development' } }),
  ]);
  const database = openPostgres(ctx.databaseUrl, 2);
  try {
    const tenant = await benchTenant(database.db, 'bench-waiting');
    ctx.log(`waiting: ${ctx.waiting} runs to awaiting_approval, ${ctx.followers} followers, on npm run api + npm run worker`);
    const r = await runJsonChild<ScaleReport>(
      '../scale.ts',
      undefined,
      {
        GWS_BASE_URL: api.url,
        GWS_API_KEY: tenant.secret,
        GWS_APPROVER_KEY: tenant.approverSecret,
        DATABASE_URL: ctx.databaseUrl,
      },
      ['--pid', `${api.pid},${worker.pid}`, '--waiting', String(ctx.waiting), '--followers', String(ctx.followers), '--tenant', tenant.name],
    );
    const target = `12. ${ctx.waiting.toLocaleString('en')} runs waiting, production split`;
    const note =
      `to awaiting_approval ${r.to_waiting_runs_per_s.toFixed(1)} runs/s at c=20; approve all ${r.approved_runs_per_s.toFixed(1)} runs/s; ` +
      `RSS of API + worker (MiB) ${JSON.stringify(r.rss_mib)}; per run added after the first tenth ${r.kib_per_waiting_run.each_added_after_the_first_tenth} KiB; ` +
      `${ctx.followers} idle followers: ${r.idle_followers_tx_per_s} transactions/s, ${r.kib_per_follower} KiB each, end event p99 ${r.end_event_lag_ms.p99} ms (${r.end_event_lag_ms.missed} missed); ` +
      `approvals failed ${r.approvals_failed}`;
    const undelivered = r.deliveries.missing + r.deliveries.doubled;
    return [
      { ...withinLimit(`${target}: settled memory per waiting run, from a warm service`, 'KiB', r.kib_per_waiting_run.from_warm_idle, 64), note, detail: r },
      withinLimit(`${target}: list of waiting runs (limit 100), median`, 'ms', r.list_ms_median, 30),
      withinLimit(`${target}: deliveries not made exactly once, all approved at c=20`, 'runs', undelivered + r.approvals_failed, 0),
    ];
  } finally {
    await database.close();
    await Promise.all([api.stop(), worker.stop()]);
    rmSync(dir, { recursive: true, force: true });
  }
}
