// `npm run scale`: what the service costs as waiting work grows, measured against a running service
// as an adopter would: C runs taken to their end to warm it, N runs brought to awaiting_approval (a
// tenth first), the service's settled memory per waiting run (from warm idle, and for each run added
// once a tenth wait), the list of waiting
// runs, F idle followers (database transactions per second, memory each), then every run approved
// at c=20 with each follower's lag to its run's end, and each delivery counted.
//
//   DATABASE_URL=postgres://… DEFAULT_PROVIDER=local RATE_LIMIT_POINTS=1000000 npm start   # the service
//   npm run scale -- --pid <the service's pid> --waiting 1000 --followers 500               # this
//   (--pid <api>,<worker>: the production split's two processes, whose memory is summed)
//
// It reads GWS_BASE_URL, GWS_API_KEY (a core key of --tenant, dev by default), GWS_APPROVER_KEY (an
// approver key of the same tenant, which sends the approvals; npm start prints the dev tenant's) and
// DATABASE_URL (the service's Postgres: the tenant's webhook is pointed at this script's receiver, and
// pg_stat_database counts the transactions). Prints JSON.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createParser } from 'eventsource-parser';
import pg from 'pg';
import { openPostgres } from '../db/client.ts';
import { setWebhookUrl } from '../services/tenants.ts';
import { median } from './bench/report.ts';
import { pooled } from './drill/pool.ts';

const { values } = parseArgs({
  options: {
    waiting: { type: 'string', default: '1000' },
    followers: { type: 'string', default: '500' },
    concurrency: { type: 'string', default: '20' },
    pid: { type: 'string' },
    'idle-seconds': { type: 'string', default: '10' },
    'settle-seconds': { type: 'string', default: '20' },
    tenant: { type: 'string', default: 'dev' },
  },
});
const BASE = process.env.GWS_BASE_URL ?? 'http://127.0.0.1:8080';
const KEY = process.env.GWS_API_KEY ?? '';
const APPROVER_KEY = process.env.GWS_APPROVER_KEY ?? '';
const DATABASE_URL = process.env.DATABASE_URL ?? '';
if (!KEY || !APPROVER_KEY || !DATABASE_URL) {
  throw new Error('Set GWS_API_KEY, GWS_APPROVER_KEY (an approver key of the same tenant) and DATABASE_URL (the running service’s Postgres).');
}
const N = Number(values.waiting);
const F = Math.min(Number(values.followers), N);
const C = Number(values.concurrency);
const INPUT = 'Tell the on-call channel that the nightly export finished.';
const headersOf = (key: string) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });
const auth = headersOf(KEY);
/** The approvals are decided with the approver key: a core key cannot decide. */
const approverAuth = headersOf(APPROVER_KEY);

/** The service's resident memory: the sum over its processes (--pid 12,34: the API and the worker of the production split). */
const pids = (values.pid ?? '').split(',').filter(Boolean);
const rssKiB = () => pids.reduce((sum, pid) => sum + Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0), 0);
/**
 * The service's RSS once it has settled. V8 hands freed pages back to the system some seconds after
 * load stops, so a reading taken at once counts garbage as memory held: sample every 2 s until two
 * readings 10 s apart differ by less than 1 %, or 120 s have passed.
 */
async function settledRssKiB(): Promise<number> {
  const readings = [rssKiB()];
  for (let waited = 0; waited < 120_000; waited += 2_000) {
    await sleep(2_000);
    readings.push(rssKiB());
    const [then, now] = [readings.at(-6), readings.at(-1)!];
    if (then !== undefined && Math.abs(now - then) < then * 0.01) return now;
  }
  return readings.at(-1)!;
}
/** The highest RSS seen while `work` runs, sampled every second. */
async function peakRssKiB(work: () => Promise<void>): Promise<number> {
  let peak = rssKiB();
  const sampler = setInterval(() => (peak = Math.max(peak, rssKiB())), 1_000);
  try {
    await work();
  } finally {
    clearInterval(sampler);
  }
  return Math.max(peak, rssKiB());
}
const mib = (kib: number) => Math.round(kib / 1024);
const p99 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.99))] ?? 0;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** 503s answered (then retried, with the same Idempotency-Key where one was sent). */
let unavailable = 0;

async function api(method: string, path: string, body?: unknown, idempotencyKey?: string, as = auth) {
  for (let attempt = 1; ; attempt++) {
    const headers = idempotencyKey ? { ...as, 'idempotency-key': idempotencyKey } : as;
    const res = await fetch(`${BASE}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    if (res.status === 503 && attempt < 30) {
      unavailable += 1;
      await sleep(1_000);
      continue;
    }
    const json = (await res.json()) as Record<string, unknown>;
    if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  }
}

/** Counts deliveries by run. */
async function receiver() {
  const deliveries = new Map<string, number>();
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => (raw += d));
    req.on('end', () => {
      const runId = (JSON.parse(raw) as { run_id: string }).run_id;
      deliveries.set(runId, (deliveries.get(runId) ?? 0) + 1);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, deliveries, close: () => server.close() };
}

/** Follows one run's events; resolves with the time its terminal event arrived. */
function follow(runId: string, signal: AbortSignal): Promise<number> {
  return new Promise((resolve, reject) => {
    fetch(`${BASE}/v1/agent-runs/${runId}/events`, { headers: { authorization: auth.authorization }, signal })
      .then(async (res) => {
        if (res.status !== 200 || !res.body) throw new Error(`follow ${runId}: ${res.status}`);
        const parser = createParser({
          onEvent: (m) => {
            if (['run.completed', 'run.failed', 'run.needs_attention'].includes(m.event ?? '')) resolve(Date.now());
          },
        });
        for await (const chunk of res.body.pipeThrough(new TextDecoderStream())) parser.feed(chunk);
      })
      .catch((err: Error) => (signal.aborted ? resolve(Number.NaN) : reject(err)));
  });
}

const database = openPostgres(DATABASE_URL, 2);
const stats = new pg.Client({ connectionString: DATABASE_URL });
await stats.connect();
const commits = async () => {
  const r = await stats.query<{ n: string }>('select xact_commit + xact_rollback as n from pg_stat_database where datname = current_database()');
  return Number(r.rows[0]!.n);
};

/** How many of `ids` match `where` (a fixed SQL condition on runs). */
const countRuns = async (ids: string[], where: string) =>
  Number((await stats.query<{ n: string }>(`select count(*) as n from runs where id = any($1) and ${where}`, [ids])).rows[0]!.n);
const until = async (done: () => Promise<boolean>) => {
  while (!(await done())) await sleep(1_000);
};

const hook = await receiver();
await setWebhookUrl(database.db, values.tenant, hook.url, { allowLoopback: true });
const report: Record<string, unknown> = { waiting: N, followers: F, concurrency: C };

/** Brings `count` runs to awaiting_approval at c=C; resolves with their ids. */
async function createWaiting(count: number): Promise<string[]> {
  const added: string[] = [];
  await pooled(
    Array.from({ length: count }, (_, i) => i),
    C,
    async () => {
      added.push((await api('POST', '/v1/agent-runs', { input: INPUT }, `scale-${randomUUID()}`)).run_id as string);
    },
  );
  // Waits by asking Postgres, not the API: a thousand reads a second would be load that no adopter makes,
  // and its garbage would count as memory held by waiting runs.
  await until(async () => (await countRuns(added, "status = 'awaiting_approval'")) === added.length);
  return added;
}

// The baseline is a warm service: C runs taken through approval to their end first, so that code compiled,
// pools opened and the workflow thread started on first use are not counted as what waiting runs hold.
const warmUp = await createWaiting(C);
await pooled(warmUp, C, (id) => api('POST', `/v1/agent-runs/${id}/approval`, { decision: 'approve' }, `approve-${id}`, approverAuth).then(() => undefined));
await until(async () => (await countRuns(warmUp, 'completed_at is not null')) === warmUp.length);
const rssBefore = await settledRssKiB();
const ids: string[] = [];
/** Brings `count` more runs to awaiting_approval at c=C; resolves with the highest RSS seen meanwhile. */
const addWaiting = (count: number) =>
  peakRssKiB(async () => {
    ids.push(...(await createWaiting(count)));
  });
// A tenth first: from there on the sticky cache is full and warm, so the rest shows what each waiting run adds.
const first = Math.max(1, Math.round(N / 10));
let started = Date.now();
let peak = await addWaiting(first);
const firstSeconds = (Date.now() - started) / 1_000;
const rssFirst = await settledRssKiB();
started = Date.now();
peak = Math.max(peak, await addWaiting(N - first));
report.to_waiting_s = firstSeconds + (Date.now() - started) / 1_000;
report.to_waiting_runs_per_s = N / (report.to_waiting_s as number);
const rssWaiting = await settledRssKiB();
report.rss_mib = {
  warm_idle: mib(rssBefore),
  [`with_${first}_waiting`]: mib(rssFirst),
  [`with_${N}_waiting`]: mib(rssWaiting),
  peak_while_creating: mib(peak),
};
report.kib_per_waiting_run = {
  from_warm_idle: Math.round((rssWaiting - rssBefore) / N),
  each_added_after_the_first_tenth: N > first ? Math.round((rssWaiting - rssFirst) / (N - first)) : 0,
};

// Each phase's figures go to stderr as soon as they are known: the approvals can take many minutes.
const progress = (phase: string) => console.error(`${phase}: ${JSON.stringify(report)}`);
progress('waiting');

const listMs: number[] = [];
for (let i = 0; i < 50; i++) {
  const t = performance.now();
  await api('GET', '/v1/agent-runs?status=awaiting_approval&limit=100');
  listMs.push(performance.now() - t);
}
report.list_ms_median = Math.round(median(listMs) * 10) / 10;

const followers = new AbortController();
const followed = ids.slice(0, F);
const ends = followed.map((id) => follow(id, followers.signal));
// Opening F streams reads each run once: let that finish before the idle cost is measured.
await sleep(Number(values['settle-seconds']) * 1_000);
const rssFollowing = await settledRssKiB();
const c0 = await commits();
await sleep(Number(values['idle-seconds']) * 1_000);
const c1 = await commits();
report.idle_followers_tx_per_s = Math.round(((c1 - c0) / Number(values['idle-seconds'])) * 10) / 10;
report.kib_per_follower = F > 0 ? Math.round((rssFollowing - rssWaiting) / F) : 0;
progress('following');

started = Date.now();
// An approval answered an error is counted, not fatal: the receiver must stay up for the runs that go on.
const approvalErrors: string[] = [];
await pooled(ids, C, async (id) => {
  await api('POST', `/v1/agent-runs/${id}/approval`, { decision: 'approve' }, `approve-${id}`, approverAuth).catch((err: Error) =>
    approvalErrors.push(err.message),
  );
});
report.approvals_failed = approvalErrors.length;
if (approvalErrors.length > 0) console.error(approvalErrors.slice(0, 5).join('\n'));
const approved = ids.length - approvalErrors.length;
await until(async () => (await countRuns(ids, 'completed_at is not null')) >= approved);
const completedAt = new Map(
  (await stats.query<{ id: string; at: Date }>('select id, completed_at as at from runs where id = any($1) and completed_at is not null', [ids])).rows.map(
    (r) => [r.id, r.at.getTime()],
  ),
);
report.approve_all_s = (Date.now() - started) / 1_000;
report.approved_runs_per_s = approved / (report.approve_all_s as number);
// Every follower of a run that ended has 5 s to see it; then the streams are closed.
const arrived = await Promise.race([Promise.all(ends), sleep(5_000).then(() => null)]);
followers.abort();
const seen = arrived ?? (await Promise.all(ends));
const lags = followed.flatMap((id, i) => (completedAt.has(id) && Number.isFinite(seen[i]) ? [seen[i]! - completedAt.get(id)!] : []));
report.end_event_lag_ms = { median: median(lags), p99: p99(lags), missed: followed.filter((id) => completedAt.has(id)).length - lags.length };
await sleep(3_000);
const counts = ids.map((id) => hook.deliveries.get(id) ?? 0);
report.answered_503_then_retried = unavailable;
report.deliveries = {
  exactly_once: counts.filter((n) => n === 1).length,
  missing: counts.filter((n) => n === 0).length,
  doubled: counts.filter((n) => n > 1).length,
};
console.log(JSON.stringify(report));
hook.close();
await stats.end();
await database.close();
