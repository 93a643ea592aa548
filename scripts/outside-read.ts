// `npm run outside-read`: one run's GET on a running service (`npm start`, say, as its user runs it),
// measured from outside as an adopter would, against row 3's anchor (Koa + @koa/router with the API's
// routes and one raw pg query) on the same Postgres. autocannon runs in a process of its own, at c=50,
// alternating service and anchor for each repetition; medians are compared (docs/performance.md).
//
//   DATABASE_URL=postgres://… RATE_LIMIT_POINTS=1000000 npm start          # the service, its per-key limit raised
//   GWS_API_KEY=… DATABASE_URL=postgres://… npm run outside-read -- --reps 3   # this
//
// It reads GWS_BASE_URL (http://127.0.0.1:8080 by default), GWS_API_KEY (a core key) and DATABASE_URL
// (the service's Postgres, which the anchor reads). Creates one run to read, and measures once it has
// stopped working (awaiting approval or ended). Prints JSON.
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { isTerminal } from '../domain/runs/states.ts';
import { startAnchorServer } from './bench/processes.ts';
import { median } from './bench/report.ts';

const { values } = parseArgs({
  options: { reps: { type: 'string', default: '3' }, seconds: { type: 'string', default: '10' }, connections: { type: 'string', default: '50' } },
});
const BASE = process.env.GWS_BASE_URL ?? 'http://127.0.0.1:8080';
const KEY = process.env.GWS_API_KEY ?? '';
const DATABASE_URL = process.env.DATABASE_URL ?? '';
if (!KEY || !DATABASE_URL) throw new Error('Set GWS_API_KEY and DATABASE_URL (the running service’s Postgres).');
const autocannonBin = createRequire(import.meta.url).resolve('autocannon/autocannon.js');

interface Measured {
  rps: number;
  p99_ms: number;
  non2xx: number;
}

/** autocannon's own process for `seconds` at c=`connections` (after 2 s of warm-up); its JSON summary. */
function autocannon(url: string, headers: Record<string, string>, seconds: number): Promise<Measured> {
  const headerArgs = Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}=${v}`]);
  const run = (duration: number) =>
    new Promise<Measured>((resolve, reject) => {
      execFile(
        process.execPath,
        [autocannonBin, '-c', values.connections!, '-d', String(duration), '-j', ...headerArgs, url],
        { maxBuffer: 1 << 24 },
        (err, stdout) => {
          if (err) return reject(err);
          const r = JSON.parse(stdout) as { requests: { average: number }; latency: { p99: number }; non2xx: number };
          resolve({ rps: r.requests.average, p99_ms: r.latency.p99, non2xx: r.non2xx });
        },
      );
    });
  return run(2).then(() => run(seconds));
}

const created = await fetch(`${BASE}/v1/agent-runs`, {
  method: 'POST',
  headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', 'idempotency-key': `outside-read-${randomUUID()}` },
  body: JSON.stringify({ input: 'Summarise the notes. The launch moved to May.' }),
});
const runId = ((await created.json()) as { run_id: string }).run_id;

/**
 * Waits until the run has stopped working (waiting for approval, or ended): until then the service plans
 * it, on `npm start`'s defaults with the embedded model, whose first use loads it and whose inference takes
 * a core for seconds, so a first repetition would measure reads beside a model (0.49 against 0.81–0.83).
 */
async function settled(): Promise<string> {
  const deadline = Date.now() + 180_000;
  for (;;) {
    const res = await fetch(`${BASE}/v1/agent-runs/${runId}`, { headers: { authorization: `Bearer ${KEY}` } });
    const { status } = (await res.json()) as { status: string };
    if (status === 'awaiting_approval' || isTerminal(status)) return status;
    if (Date.now() > deadline) throw new Error(`run ${runId} is still ${status} after 180 s`);
    await new Promise((r) => setTimeout(r, 500));
  }
}
console.error(`run ${runId}: ${await settled()}`);
const db = new pg.Client({ connectionString: DATABASE_URL });
await db.connect();
const tenantId = (await db.query<{ tenant_id: string }>('select tenant_id from runs where id = $1', [runId])).rows[0]!.tenant_id;
await db.end();

const anchor = await startAnchorServer('pg', DATABASE_URL);
const service: Measured[] = [];
const anchored: Measured[] = [];
try {
  for (let rep = 1; rep <= Number(values.reps); rep++) {
    service.push(await autocannon(`${BASE}/v1/agent-runs/${runId}`, { authorization: `Bearer ${KEY}` }, Number(values.seconds)));
    anchored.push(await autocannon(`${anchor.url}/v1/agent-runs/${runId}?tenant=${tenantId}`, {}, Number(values.seconds)));
    console.error(`rep ${rep}: ${service.at(-1)!.rps} vs ${anchored.at(-1)!.rps} req/s`);
  }
} finally {
  await anchor.stop();
}
const rps = { service: median(service.map((m) => m.rps)), anchor: median(anchored.map((m) => m.rps)) };
const non2xx = service.reduce((n, m) => n + m.non2xx, 0) + anchored.reduce((n, m) => n + m.non2xx, 0);
console.log(
  JSON.stringify({
    connections: Number(values.connections),
    seconds: Number(values.seconds),
    rps,
    ratio: Math.round((rps.service / rps.anchor) * 1000) / 1000,
    p99_ms: { service: median(service.map((m) => m.p99_ms)), anchor: median(anchored.map((m) => m.p99_ms)) },
    non2xx,
    per_rep: service.map((m, i) => Math.round((m.rps / anchored[i]!.rps) * 1000) / 1000),
  }),
);
// autocannon counts every answer: with refusals (429 at the default per-key limit) the ratio measures them, not reads.
if (non2xx > 0) {
  console.error(`${non2xx} answers were not 2xx, so the ratio does not measure reads: raise the service's RATE_LIMIT_POINTS.`);
  process.exitCode = 1;
}
