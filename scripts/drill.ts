// `npm run drill`: the fault drill. Starts the production split in a scratch folder
// (its own Postgres and Temporal dev server, N API replicas, M workers, a webhook
// receiver), drives mixed load while a seeded schedule kills, stops and restarts
// processes and dependencies, then accounts from Postgres and Temporal. Prints a table
// and a last line of JSON; exits 1 on any violation. docs/operations.md ("Reliability") says what it checks.
//
//   npm run drill -- --quick              at least 20 runs and 3 faults, under 3 minutes (CI)
//   npm run drill -- --minutes 10         the full drill
//   npm run drill -- --seed 1234          replays a schedule
//   npm run drill -- --rollout [--quick]  the rollout drill instead (scripts/drill/rollout.ts);
//                                         --no-versioning shows what it guards against
//   npm run drill -- --rollout --waiting 1000
//                                         with 1,000 runs awaiting approval at the promote (default 8; 3 with --quick)
import { randomInt } from 'node:crypto';
import { parseArgs } from 'node:util';
import { account, type Accounting } from './drill/accounting.ts';
import { Cluster, sleep } from './drill/cluster.ts';
import { type FaultPlan, faultSchedule, injectFaults } from './drill/faults.ts';
import { kindOf, LoadDriver } from './drill/load.ts';
import { startReceiver } from './drill/receiver.ts';
import { printReport } from './drill/report.ts';
import { seededRng } from './drill/rng.ts';
import { rolloutDrill } from './drill/rollout.ts';
import { setUpTenants } from './drill/tenants.ts';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    minutes: { type: 'string', default: '10' },
    seed: { type: 'string' },
    apis: { type: 'string', default: '2' },
    workers: { type: 'string', default: '2' },
    rollout: { type: 'boolean', default: false },
    'no-versioning': { type: 'boolean', default: false },
    waiting: { type: 'string' },
  },
});

/** A wrong argument: its message alone (no stack trace), exit 2, before anything starts. */
const usage = (message: string): never => {
  console.error(`drill: ${message}`);
  process.exit(2);
};
const positive = (name: string, value: string) => {
  if (!/^\d+$/.test(value) || Number(value) < 1) usage(`--${name} must be a whole number of at least 1, not ${JSON.stringify(value)}`);
  return Number(value);
};
const seed = values.seed === undefined ? randomInt(2 ** 31) : positive('seed', values.seed);
const minutes = positive('minutes', values.minutes);
const shape = values.quick
  ? { runs: 24, tenants: 2, loadMs: 40_000, faults: { count: 7, gapMs: [2_000, 4_000], outageMs: [4_000, 6_000] } as FaultPlan, runTimeoutMs: 90_000 }
  : {
      runs: 40 * minutes,
      tenants: 4,
      loadMs: minutes * 60_000,
      faults: { count: 3 * minutes, gapMs: [10_000, 30_000], outageMs: [20_000, 60_000] } as FaultPlan,
      runTimeoutMs: 300_000,
    };
const waiting = values.waiting === undefined ? undefined : positive('waiting', values.waiting);
if (waiting !== undefined && !values.rollout) usage('--waiting applies to the rollout drill only: npm run drill -- --rollout --waiting N');
if (values.rollout) {
  const summary = await rolloutDrill({ quick: values.quick, versioning: !values['no-versioning'], seed, waiting });
  process.exit(summary.violations > 0 ? 1 : 0);
}
const rng = seededRng(seed);
const started = Date.now();
console.log(
  `drill: seed ${seed} (replay with --seed ${seed}${values.quick ? ' --quick' : ` --minutes ${minutes}`}); ${shape.runs} runs, ${shape.faults.count} faults`,
);

let cluster: Cluster | undefined;
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    // Interrupted: nothing may be left behind.
    interrupted = true;
    console.error(`drill: ${signal}, stopping everything it started`);
    cluster?.killAll();
    process.exit(130);
  });
}

cluster = await Cluster.start({ apis: positive('apis', values.apis), workers: positive('workers', values.workers) });
console.log(`drill: cluster up in ${cluster.scratch} (${cluster.apiUrls().length} APIs, Temporal ${cluster.temporalAddress})`);
const receiver = await startReceiver();
const tenants = await setUpTenants(cluster.postgres.url, `drill-${seed}`, shape.tenants, `${receiver.url}/tool`);
const c = cluster;
const load = new LoadDriver(() => c.apiUrls(), rng, seed, 120_000);
for (const t of tenants) await load.subscribe(t, receiver.url);

const faultsDone = injectFaults(cluster, rng, shape.faults, faultSchedule(rng, shape.faults.count), () => interrupted);
const drives: Promise<void>[] = [];
for (let n = 0; n < shape.runs; n++) {
  const tenant = tenants[n % tenants.length]!;
  drives.push(load.drive(n, kindOf(rng), tenant, shape.runTimeoutMs));
  if (n % 4 === 0) drives.push(load.chat(tenant));
  await sleep(shape.loadMs / shape.runs);
}
const faults = await faultsDone;
await Promise.all(drives);

// Settle: the sweeper takes the chat holds of killed APIs (its lease is 4 s here), and pending
// notifications get their next attempt; both are waited for, within bounds.
await untilSettled(
  cluster.postgres.url,
  tenants.map((t) => t.tenantId),
  60_000,
);
const accounting: Accounting = await account({
  databaseUrl: cluster.postgres.url,
  temporal: cluster.temporalConnection,
  tenantIds: tenants.map((t) => t.tenantId),
  load: load.stats,
  receiver,
  faults,
  errorLines: cluster.errorLines,
});
await receiver.close();
await cluster.stop();
const leftBehind = cluster.leftBehind();
if (leftBehind.length > 0) accounting.violations.push({ invariant: 'process_left_behind', detail: leftBehind.join(', ') });

const summary = printReport({ seed, quick: values.quick, elapsedMs: Date.now() - started, load: load.stats, faults, accounting });
process.exit(summary.violations > 0 ? 1 : 0);

/** Waits until no chat hold is open and no notification is pending (or `timeoutMs` passes). */
async function untilSettled(databaseUrl: string, tenantIds: string[], timeoutMs: number): Promise<void> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const { rows } = await client.query<{ n: string }>(
        `select (select count(*) from ledger_holds where tenant_id = any($1) and step = 'chat' and status = 'open')
              + (select count(*) from webhook_deliveries where tenant_id = any($1) and status = 'pending') as n`,
        [tenantIds],
      );
      if (Number(rows[0]!.n) === 0) return;
      await sleep(1_000);
    }
  } finally {
    await client.end();
  }
}
