// The load generator, in its own child process (never the API's process):
//   node --import tsx scripts/bench/load.ts '<LoadArgs json>'
// runs autocannon (programmatic API) for a warm-up, then for the measured time, and
// prints one JSON line (LoadResult) of the measured part. Spawned with an IPC
// channel and no argument (processes.ts startLoadGenerator), it stays up and
// answers each {id, args} message with {id, result}, one measurement at a time,
// so the bench does not pay a node + tsx start per measurement.
import http from 'node:http';
import { createRequire } from 'node:module';
import { type LoadResult, summarize } from './report.ts';

export interface LoadArgs {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  connections: number;
  warmupSeconds: number;
  seconds: number;
  /**
   * Sub-millisecond latencies (autocannon's are whole milliseconds): a plain keep-alive
   * node:http loop with `connections` requests in flight, timed with performance.now().
   */
  precise?: boolean;
}

interface AutocannonResult {
  duration: number;
  '2xx': number;
  non2xx: number;
  errors: number;
  timeouts: number;
  latency: { p50: number; p99: number; average: number };
  statusCodeStats?: Record<string, { count: number }>;
}
type Autocannon = (opts: Record<string, unknown>) => Promise<AutocannonResult>;
// autocannon ships CommonJS without types.
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

async function run(a: LoadArgs, seconds: number): Promise<AutocannonResult> {
  return autocannon({
    url: a.url,
    method: a.method ?? 'GET',
    headers: a.headers ?? {},
    ...(a.body ? { body: a.body } : {}),
    connections: a.connections,
    pipelining: 1,
    duration: seconds,
    timeout: 30,
  });
}

/** The precise loop: `connections` sequential request loops for `seconds`. */
async function loop(a: LoadArgs, seconds: number): Promise<LoadResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: a.connections });
  const one = () =>
    new Promise<number>((resolve, reject) => {
      const req = http.request(a.url, { method: a.method ?? 'GET', headers: a.headers ?? {}, agent }, (res) => {
        res.on('data', () => {});
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end(a.body);
    });
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let failed = 0;
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  await Promise.all(
    Array.from({ length: a.connections }, async () => {
      while (performance.now() < end) {
        const s = performance.now();
        const status = await one().catch(() => 0);
        statuses[status] = (statuses[status] ?? 0) + 1;
        if (status >= 200 && status < 300) latencies.push(performance.now() - s);
        else failed++;
      }
    }),
  );
  agent.destroy();
  return { ...summarize(latencies, (performance.now() - t0) / 1000, failed), statuses };
}

async function measure(args: LoadArgs): Promise<LoadResult> {
  if (args.precise) {
    if (args.warmupSeconds > 0) await loop(args, args.warmupSeconds);
    return loop(args, args.seconds);
  }
  if (args.warmupSeconds > 0) await run(args, args.warmupSeconds);
  const r = await run(args, args.seconds);
  return {
    rps: Math.round((r['2xx'] / r.duration) * 10) / 10,
    p50_ms: r.latency.p50,
    p99_ms: r.latency.p99,
    ok: r['2xx'],
    failed: r.non2xx + r.errors + r.timeouts,
    statuses: Object.fromEntries(Object.entries(r.statusCodeStats ?? {}).map(([code, v]) => [code, v.count])),
  };
}

if (process.argv[2]) {
  console.log(JSON.stringify(await measure(JSON.parse(process.argv[2]) as LoadArgs)));
  process.exit(0);
} else if (process.send) {
  process.on('message', (m: { id: number; args: LoadArgs }) => {
    measure(m.args).then(
      (result) => process.send!({ id: m.id, result }),
      (err: Error) => process.send!({ id: m.id, error: err.message }),
    );
  });
  process.on('disconnect', () => process.exit(0));
}
