// `npm run bench` (BENCH_QUICK=1 for a smoke run, BENCH_REPS=n repetitions, default 5):
// each service measurement against an anchor measured in the same run, every
// process on its own: the API under test (bin/api.ts, NODE_ENV=production, as
// `npm run api` runs it) on a fresh Postgres database and a Temporal dev server
// this script starts, anchors (scripts/bench/anchors.ts), and one load generator
// child (scripts/bench/load.ts, autocannon) that does nothing else (with BENCH_PIN=1, the server
// under test on a CPU of its own: scripts/bench/cores.ts). Phases alternate
// service, anchor, anchor, service… (each pair in the other order) with a warm-up each;
// medians are compared. BENCH_ONLY picks comparisons; BENCH_PROFILE_DIR writes CPU profiles.
// Writes bench-results/bench-<time>.{json,md}; docs/performance.md
// explains the rows. See scripts/bench/*.ts: processes, anchors, load, seed, report.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { DevServer } from '../runtime/temporal-dev-server.ts';
import type { StartAnchorArgs } from './bench/anchors.ts';
import type { LoadArgs } from './bench/load.ts';
import { pinningNote, pinSelf } from './bench/cores.ts';
import { e2eRow } from './bench/e2e.ts';
import { toolRunRow } from './bench/tools-row.ts';
import { waitingRows } from './bench/waiting.ts';
import { type BenchCluster, startBenchCluster } from './bench/postgres-cluster.ts';
import {
  ADMIN_URL,
  type BenchDatabase,
  startDiscardingCollector,
  createDatabase,
  runJsonChild,
  type Server,
  startAnchorServer,
  startApi,
  startLoadGenerator,
  startNpmStart,
  startTemporal,
} from './bench/processes.ts';
import { atLeast, atMost, type LoadResult, machineNote, medianOf, type Row, table, withinMs, writeReport } from './bench/report.ts';
import { RUN_INPUT, seed } from './bench/seed.ts';

const QUICK = process.env.BENCH_QUICK === '1';
// Five repetitions of 6 s rather than three of 10: on this kind of machine a phase's throughput
// moves by 10-20% from one repetition to the next, and a median of five moves less.
const REPS = Math.max(3, Number(process.env.BENCH_REPS ?? 5));
const SECONDS = Number(process.env.BENCH_SECONDS ?? (QUICK ? 1 : 6));
const WARMUP = Number(process.env.BENCH_WARMUP_SECONDS ?? (QUICK ? 0.5 : 2));
/** Latency-only phases (target 4) need fewer seconds for a stable p50. */
const SCALE_SECONDS = QUICK ? SECONDS : Math.max(1, Math.round(SECONDS / 2));
const SCALE_CONNECTIONS = 5;
const TASK_QUEUE = 'bench-no-worker';
/** BENCH_ONLY=health,get-run: run only these comparisons (create, health, get-run, npm-start, scale, chat, tracing, metrics, embedded, runs, e2e, tools; waiting runs only when named), for profiling. */
const ONLY = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(',')) : undefined;
const selected = (name: string) => !ONLY || ONLY.has(name);
const payloadKey = randomBytes(32).toString('base64');

const log = (s: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${s}\n`);
// Before any child starts: the load generator, Postgres and Temporal inherit this process's CPUs.
pinSelf();
const generator = startLoadGenerator();
const load = (a: Omit<LoadArgs, 'warmupSeconds' | 'seconds'>, seconds = SECONDS) =>
  generator.measure<LoadResult>({ warmupSeconds: WARMUP, seconds, ...a } satisfies LoadArgs);

const phases: Record<string, Phase> = {};
type Phase = { a: LoadResult[]; b: LoadResult[] };

/**
 * Repetition `i` of phase `name`: both sides measured, A then B on even repetitions and B then A on odd
 * ones (A, B, B, A, A, B, …), so a drift over the comparison (the dev server slowing as workflows pile up)
 * favours neither side; then logged.
 */
async function measureRep(name: string, rec: Phase, i: number, a: () => Promise<LoadResult>, b: () => Promise<LoadResult>) {
  if (i % 2 === 0) {
    rec.a.push(await a());
    rec.b.push(await b());
  } else {
    rec.b.push(await b());
    rec.a.push(await a());
  }
  const [ra, rb] = [rec.a.at(-1)!, rec.b.at(-1)!];
  for (const r of [ra, rb]) if (r.failed) log(`  ${name}: ${r.failed} failed; statuses ${JSON.stringify(r.statuses ?? {})}`);
  log(`${name} rep ${i + 1}/${REPS}: ${ra.rps} vs ${rb.rps} req/s; p50 ${ra.p50_ms} vs ${rb.p50_ms} ms`);
}

/** REPS repetitions of A against B (measureRep); medians of each side. */
async function alternate(name: string, a: () => Promise<LoadResult>, b: () => Promise<LoadResult>) {
  const rec: Phase = { a: [], b: [] };
  phases[name] = rec;
  for (let i = 0; i < REPS; i++) await measureRep(name, rec, i, a, b);
  return { a: medianOf(rec.a), b: medianOf(rec.b) };
}

/** What one side of a fresh pair is: one server, or (row 10's anchors) two, stopped together. */
interface Side {
  stop(): Promise<void>;
}
type PairKind = 'get' | 'health';
/** Each kind's request on each side of a pair. */
type PairRequests<A, B> = Record<PairKind, { a: (side: A) => Promise<LoadResult>; b: (side: B) => Promise<LoadResult> }>;

/**
 * Rows 7, 9 and 10: two sides compared on a fresh pair of processes for each repetition (both started
 * together, one run's GET measured first, then /health, both stopped), instead of one pair for the whole
 * comparison. One process keeps its own speed for its life (where the scheduler and V8 happen to put
 * it): with one pair, the same tree's traced GET at 10 % measured 0.99, 0.90 and 0.69 of tracing off in
 *  three full runs, each run's five pairs alike (bench runs of 2026-11-27, in git history). The median
 * is then one over REPS pairs of processes, as well as over REPS phases.
 */
async function alternateFreshPairs<A extends Side, B extends Side>(
  name: string,
  start: { a: () => Promise<A>; b: () => Promise<B> },
  requests: PairRequests<A, B>,
) {
  const kinds = { get: `${name}-get-run`, health: `${name}-health` } as const;
  const recs: Record<PairKind, Phase> = { get: { a: [], b: [] }, health: { a: [], b: [] } };
  for (const kind of ['get', 'health'] as const) phases[kinds[kind]] = recs[kind];
  for (let i = 0; i < REPS; i++) {
    const [a, b] = await Promise.all([start.a(), start.b()]);
    for (const kind of ['get', 'health'] as const) {
      await measureRep(
        kinds[kind],
        recs[kind],
        i,
        () => requests[kind].a(a),
        () => requests[kind].b(b),
      );
    }
    await Promise.all([a.stop(), b.stop()]);
  }
  return { get: { a: medianOf(recs.get.a), b: medianOf(recs.get.b) }, health: { a: medianOf(recs.health.a), b: medianOf(recs.health.b) } };
}

let temporal: DevServer | undefined;
let database: BenchDatabase | undefined;
let cluster: BenchCluster | null = null;
const servers: Server[] = [];
const started = Date.now();
try {
  log(`bench: ${QUICK ? 'quick' : 'full'}, ${REPS} reps, ${SECONDS}s (+${WARMUP}s warm-up) per phase; ${pinningNote}`);
  cluster = await startBenchCluster();
  log(
    cluster ? `postgres: the bench's own cluster (${cluster.adminUrl}; fsync off)` : `postgres: ${new URL(ADMIN_URL).host} (BENCH_DATABASE_URL, or no initdb)`,
  );
  [temporal, database] = await Promise.all([startTemporal(), createDatabase(cluster?.adminUrl)]);
  const s = await seed(database.url);
  log('seeded: 100 and 10 000 runs, 12 000 ledger entries');
  const [api, hello, onePg] = await Promise.all([
    startApi({ databaseUrl: database.url, temporalAddress: temporal.address, payloadKey, taskQueue: TASK_QUEUE }),
    startAnchorServer('hello', database.url),
    startAnchorServer('pg', database.url),
  ]);
  servers.push(api, hello, onePg);
  log(`api ${api.url}, anchors ${hello.url} ${onePg.url}`);
  /**
   * Another API process like `api`, started now: a comparison of two settings (rows 7 and 9) starts both
   * sides fresh, so both have served the same requests. Against `api`, which has served the creations
   * and the chats of the rows before, a fresh process answered /health about 10 % faster with the same
   * code (tracing on measured 1.10 of tracing off).
   */
  const settings = { databaseUrl: database.url, temporalAddress: temporal.address, payloadKey, taskQueue: TASK_QUEUE };
  const freshApi = async (name: string, env: Record<string, string> = {}) => {
    const started = await startApi({ ...settings, name, env });
    servers.push(started);
    return started;
  };
  const auth = (secret: string) => ({ authorization: `Bearer ${secret}`, 'content-type': 'application/json' });
  const runId = s.small.sampleRunId!;
  /** One run's GET and /health, c=50: on our server at `url` (`ours`), and on the routed anchors (rows 2, 3 and 10). */
  const ours = {
    get: (url: string) => load({ url: `${url}/v1/agent-runs/${runId}`, headers: auth(s.small.secret), connections: 50 }),
    health: (url: string) => load({ url: `${url}/health`, connections: 50 }),
  };
  const anchored = {
    get: (url: string) => load({ url: `${url}/v1/agent-runs/${runId}?tenant=${s.small.tenantId}`, connections: 50 }),
    health: (url: string) => load({ url: `${url}/health`, connections: 50 }),
  };
  /** Rows 7 and 9: the same requests on both sides of a pair of APIs. */
  const oursOnBoth: PairRequests<Server, Server> = {
    get: { a: (x) => ours.get(x.url), b: (x) => ours.get(x.url) },
    health: { a: (x) => ours.health(x.url), b: (x) => ours.health(x.url) },
  };
  const rows: Row[] = [];

  // 1. Creation, c=10, no worker on the queue; no Idempotency-Key (each request a new run).
  if (selected('create')) {
    const create = await alternate(
      'create',
      () =>
        load({ url: `${api.url}/v1/agent-runs`, method: 'POST', headers: auth(s.creator.secret), body: JSON.stringify({ input: RUN_INPUT }), connections: 10 }),
      () =>
        runJsonChild<LoadResult>(
          'anchors.ts',
          {
            temporalAddress: temporal!.address,
            taskQueue: TASK_QUEUE,
            tenantId: s.creator.tenantId,
            tenantName: s.creator.name,
            input: RUN_INPUT,
            connections: 10,
            warmupSeconds: WARMUP,
            seconds: SECONDS,
          } satisfies StartAnchorArgs,
          { PAYLOAD_KEY: payloadKey },
          ['start'],
          'under-test',
        ),
    );
    rows.push(atLeast('1. POST /v1/agent-runs c=10 vs raw workflow.start', 'req/s', create.a.rps, create.b.rps, 0.9, create.a.failed + create.b.failed));
  }

  type Compared = { a: LoadResult; b: LoadResult };
  /**
   * Rows 2 and 3 (and row 10's, for `npm start`): /health against the routed anchor answering a
   * constant, and one run's GET against the routed anchor doing one pg query.
   */
  const routedRows = (row: string, health: Compared | undefined, get: Compared | undefined) => {
    if (health) {
      rows.push(
        atLeast(
          `${row.replace('#', '2')}GET /health c=50 vs Koa + router, constant /health`,
          'req/s',
          health.a.rps,
          health.b.rps,
          0.8,
          health.a.failed + health.b.failed,
        ),
      );
    }
    if (get) {
      const failed = get.a.failed + get.b.failed;
      const target = `${row.replace('#', '3')}GET /v1/agent-runs/{id} c=50 vs Koa + router + 1 pg query`;
      rows.push(atLeast(target, 'req/s', get.a.rps, get.b.rps, 0.8, failed));
      rows.push(atMost(target, 'p99 ms', get.a.p99_ms, get.b.p99_ms, 1.5, failed));
    }
  };

  // 2. /health c=50 vs Koa + @koa/router with the API's routes, /health answering a constant.
  // 3. One run c=50 vs Koa + @koa/router with the API's routes, the run route doing one pg query.
  const phaseOf = { get: 'get-run', health: 'health' } as const;
  const anchorUrl = { get: onePg.url, health: hello.url };
  const againstAnchors = async (kind: PairKind) =>
    selected(phaseOf[kind])
      ? await alternate(
          phaseOf[kind],
          () => ours[kind](api.url),
          () => anchored[kind](anchorUrl[kind]),
        )
      : undefined;
  routedRows('#. ', await againstAnchors('health'), await againstAnchors('get'));

  // 10. `npm start` as users run it (API and worker in one process, over Postgres) vs the same anchors:
  // the default must serve at its API's speed. A fresh `npm start` (in a fresh data directory) and fresh
  // anchors for each repetition, as rows 7 and 9: with one of each per run, the row moved between
  // 0.76 and 0.90 from run to run of the same tree, while its five repetitions agreed within a run.
  if (selected('npm-start')) {
    const startDefault = async () => {
      const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gws-bench-start-'));
      const started = await startNpmStart({ ...settings, taskQueue: 'bench-npm-start', dataDir });
      servers.push(started);
      return {
        url: started.url,
        stop: async () => {
          await started.stop();
          rmSync(dataDir, { recursive: true, force: true });
        },
      };
    };
    const startAnchors = async () => {
      const [constant, onePgQuery] = await Promise.all([startAnchorServer('hello', database!.url), startAnchorServer('pg', database!.url)]);
      servers.push(constant, onePgQuery);
      return { constant, onePgQuery, stop: async () => void (await Promise.all([constant.stop(), onePgQuery.stop()])) };
    };
    const compared = await alternateFreshPairs(
      'npm-start',
      { a: startDefault, b: startAnchors },
      {
        get: { a: (x) => ours.get(x.url), b: (x) => anchored.get(x.onePgQuery.url) },
        health: { a: (x) => ours.health(x.url), b: (x) => anchored.health(x.constant.url) },
      },
    );
    routedRows('10. npm start (row #): ', compared.health, compared.get);
  }

  // 4. Listing shapes at 10 000 runs vs 100 runs (two tenants, same shapes).
  const shapes: [string, (runId: string) => string][] = [
    ['list', () => '/v1/agent-runs'],
    ['search (no match)', () => '/v1/agent-runs?q=zzqx-no-such-text'],
    ['status filter', () => '/v1/agent-runs?status=needs_attention'],
    ['journey events', () => '/v1/journey-events'],
    ['journey events ?run_id=', (id) => `/v1/journey-events?run_id=${id}`],
  ];
  for (const [label, pathOf] of selected('scale') ? shapes : []) {
    const scale = await alternate(
      `scale ${label}`,
      () => load({ url: api.url + pathOf(s.large.sampleRunId!), headers: auth(s.large.secret), connections: SCALE_CONNECTIONS, precise: true }, SCALE_SECONDS),
      () => load({ url: api.url + pathOf(s.small.sampleRunId!), headers: auth(s.small.secret), connections: SCALE_CONNECTIONS, precise: true }, SCALE_SECONDS),
    );
    rows.push(
      atMost(`4. ${label}: 10k runs vs 100 runs, c=${SCALE_CONNECTIONS}`, 'p50 ms', scale.a.p50_ms, scale.b.p50_ms, 1.5, scale.a.failed + scale.b.failed),
    );
  }

  // 5. Chat (local provider), tenant with ~12 000 ledger entries: c=50 vs c=10.
  const chatBody = JSON.stringify({
    model: 'svc-workspace',
    messages: [{ role: 'user', content: 'Summarise the renewal risk of the supplier contracts in one sentence.' }],
  });
  // At c=50 a completion takes over a second here, so a phase is at least 3 s long.
  const chat = (connections: number) => () =>
    load({ url: `${api.url}/v1/chat/completions`, method: 'POST', headers: auth(s.chatter.secret), body: chatBody, connections }, Math.max(SECONDS, 3));
  if (selected('chat')) {
    const chats = await alternate('chat', chat(50), chat(10));
    rows.push(atLeast('5. Chat (local) c=50 vs c=10, 12k ledger entries', 'req/s', chats.a.rps, chats.b.rps, 1, chats.a.failed + chats.b.failed));
  }

  // 7. Tracing's cost: the same API with tracing on (exported over OTLP/HTTP to a receiver that drops it)
  // against the API with tracing off (no SDK at all), at the default sampling (10 % of new traces,
  // parent-based; /health never traced) and at 100 %. docs/performance.md has the µs per request.
  if (selected('tracing')) {
    const collector = await startDiscardingCollector();
    const samplings: { label: string; name: string; env: Record<string, string>; bounds: { health: number; get: number } }[] = [
      { label: 'default sampling (10 %)', name: 'api-traced-default', env: {}, bounds: { health: 0.9, get: 0.85 } },
      { label: '100 %', name: 'api-traced-all', env: { OTEL_TRACES_SAMPLER: 'always_on' }, bounds: { health: 0.5, get: 0.68 } },
    ];
    for (const sampling of samplings) {
      // Tracing off, started with it each time: both sides serve the same requests from the same start. One
      // run's GET first: once the traced side has recorded a request its context machinery is on, as in
      // production, where one process serves both, and /health is then measured with it.
      const { get, health } = await alternateFreshPairs(
        sampling.name,
        { a: () => freshApi(sampling.name, { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, ...sampling.env }), b: () => freshApi('api-untraced') },
        oursOnBoth,
      );
      rows.push(
        atLeast(
          `7. GET /v1/agent-runs/{id} c=50, tracing on, ${sampling.label} vs off`,
          'req/s',
          get.a.rps,
          get.b.rps,
          sampling.bounds.get,
          get.a.failed + get.b.failed,
        ),
      );
      rows.push(
        atLeast(
          `7. GET /health c=50, tracing on, ${sampling.label} vs off`,
          'req/s',
          health.a.rps,
          health.b.rps,
          sampling.bounds.health,
          health.a.failed + health.b.failed,
        ),
      );
    }
    await collector.stop();
  }

  // 9. Metrics' cost: the API serving metrics (production's default) against the same API with
  // METRICS_PORT=0, which records none.
  if (selected('metrics')) {
    // Both started together for each repetition, one run's GET then /health, as row 7's.
    const { get, health } = await alternateFreshPairs(
      'metrics',
      { a: () => freshApi('api-metrics-on'), b: () => freshApi('api-metrics-off', { METRICS_PORT: '0' }) },
      oursOnBoth,
    );
    rows.push(atLeast('9. GET /v1/agent-runs/{id} c=50, metrics on vs off', 'req/s', get.a.rps, get.b.rps, 0.95, get.a.failed + get.b.failed));
    rows.push(atLeast('9. GET /health c=50, metrics on vs off', 'req/s', health.a.rps, health.b.rps, 0.95, health.a.failed + health.b.failed));
  }

  if (selected('embedded')) {
    // Each side in a process of its own, alternating, as the load phases: generation speed and memory.
    type Generation = { tokens_per_s: number; rss_mb: number };
    const generate = (mode: 'service' | 'anchor') => () => runJsonChild<Generation>('embedded.ts', { mode, answers: QUICK ? 2 : 6, maxTokens: 64 });
    const service: Generation[] = [];
    const anchor: Generation[] = [];
    for (let i = 0; i < (QUICK ? 1 : 3); i++) {
      service.push(await generate('service')());
      anchor.push(await generate('anchor')());
    }
    const median = <K extends string>(xs: Record<K, number>[], k: K) => xs.map((x) => x[k]).sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    log(`embedded: service ${median(service, 'tokens_per_s').toFixed(1)} tok/s, ${median(service, 'rss_mb')} MB`);
    rows.push(
      atLeast('6. Embedded model: generation vs node-llama-cpp alone', 'tokens/s', median(service, 'tokens_per_s'), median(anchor, 'tokens_per_s'), 0.9, 0),
    );
    rows.push(atMost('6. Embedded model: generation vs node-llama-cpp alone', 'RSS MB', median(service, 'rss_mb'), median(anchor, 'rss_mb'), 1.5, 0));

    // More than one caller: 4 chats streaming at once (each asking 3 questions in turn) against 1 chat
    // asking 6, through the service's provider with its default EMBEDDED_PARALLEL; each phase in a
    // process of its own, alternating. Aggregate tokens/s, and the median time to the first token.
    type Chats = { tokens_per_s: number; ttft_ms: number };
    const chats = (clients: number, answers: number) =>
      runJsonChild<Chats>('embedded.ts', { mode: 'chats', clients, answers: QUICK ? 1 : answers, maxTokens: 64 });
    const four: Chats[] = [];
    const one: Chats[] = [];
    for (let i = 0; i < (QUICK ? 1 : 3); i++) {
      if (i % 2 === 0) {
        four.push(await chats(4, 3));
        one.push(await chats(1, 6));
      } else {
        one.push(await chats(1, 6));
        four.push(await chats(4, 3));
      }
      log(
        `embedded chats rep ${i + 1}: 4 at once ${four.at(-1)!.tokens_per_s.toFixed(1)} tok/s, first token ${four.at(-1)!.ttft_ms} ms; 1: ${one.at(-1)!.tokens_per_s.toFixed(1)} tok/s, ${one.at(-1)!.ttft_ms} ms`,
      );
    }
    const target = '6. Embedded model: 4 chats at once vs 1 chat, streamed';
    rows.push(atLeast(target, 'tokens/s (all chats)', median(four, 'tokens_per_s'), median(one, 'tokens_per_s'), 2, 0));
    rows.push(atMost(target, 'median ms to first token', median(four, 'ttft_ms'), median(one, 'ttft_ms'), 2, 0));
  }

  if (selected('runs')) {
    // Target 8: a run on npm start's defaults reaches its approval (or its end) quickly. The quick eval's
    // cases, each side in its own npm start: the embedded model against the local provider (no model).
    type EvalSummary = { cases: number; latency_to_approval_ms: { median: number; max: number } };
    const evalOn = (provider: 'embedded' | 'local') => runJsonChild<EvalSummary>('../eval.ts', undefined, {}, ['--quick', '--provider', provider]);
    const model = await evalOn('embedded');
    const anchor = await evalOn('local');
    log(
      `runs: to approval, median ${model.latency_to_approval_ms.median} ms (local ${anchor.latency_to_approval_ms.median}), slowest ${model.latency_to_approval_ms.max} ms`,
    );
    rows.push(
      withinMs(
        '8. Run on npm start defaults: to approval or end, median of the quick eval',
        model.latency_to_approval_ms.median,
        anchor.latency_to_approval_ms.median,
        15_000,
      ),
    );
    rows.push(
      withinMs(
        '8. Run on npm start defaults: to approval or end, slowest of the quick eval',
        model.latency_to_approval_ms.max,
        anchor.latency_to_approval_ms.max,
        30_000,
      ),
    );
  }

  /** The settings rows 11 and 13 share: runs take seconds, so their phases are longer than the request rows'. */
  const runRowContext = (warmupSeconds: number, seconds: number) => ({
    databaseUrl: database!.url,
    temporalAddress: temporal!.address,
    temporalPid: temporal!.pid,
    payloadKey,
    tenant: s.creator,
    quick: QUICK,
    warmupSeconds: Math.max(WARMUP, warmupSeconds),
    seconds: Math.max(SECONDS, seconds),
    alternate,
    log,
  });

  // 11. Runs end to end: analysis runs on the local provider, POST to their end at c=20, against a raw
  // Temporal workflow of the same activities and Postgres writes (scripts/bench/e2e.ts). A run takes
  // seconds at c=20 (4-5 s on two busy cores), so the phases are longer than the request rows': a
  // warm-up of about two runs' time, past the first batch's end, and a window of several runs' time.
  if (selected('e2e')) rows.push(await e2eRow(runRowContext(8, QUICK ? 6 : 15)));

  // 13. A tool-calling run on the scripted model (two reads, one approved call, the report) against raw
  // Temporal of the same model turns and tool calls (scripts/bench/tools-row.ts).
  if (selected('tools')) rows.push(await toolRunRow(runRowContext(5, QUICK ? 6 : 12)));

  // 12. Many runs waiting on the production split: only when asked for by name (10,000 runs took 27 min on 2 cores).
  if (ONLY?.has('waiting')) {
    const waiting = Number(process.env.BENCH_WAITING ?? 10_000);
    rows.push(
      ...(await waitingRows({
        databaseUrl: database.url,
        temporalAddress: temporal.address,
        payloadKey,
        waiting,
        followers: Math.min(500, waiting),
        log,
      })),
    );
  }

  const at = new Date().toISOString();
  const file = writeReport({
    at,
    settings: { quick: QUICK, reps: REPS, seconds: SECONDS, warmupSeconds: WARMUP, scaleSeconds: SCALE_SECONDS, pinning: pinningNote },
    rows,
    phases,
  });
  console.log(table(rows));
  console.log(`\nMachine: ${machineNote()}; ${QUICK ? 'BENCH_QUICK=1, ' : ''}${REPS} reps × ${SECONDS}s (+${WARMUP}s warm-up), medians; ${pinningNote}; ${at}`);
  console.log(`report: ${file} (${Math.round((Date.now() - started) / 1000)} s)`);
} finally {
  await generator.stop();
  await Promise.all(servers.map((x) => x.stop()));
  await database?.drop().catch((e: Error) => log(`drop failed: ${e.message}`));
  cluster?.stop();
  await temporal?.stop();
}
