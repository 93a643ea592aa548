// CPU µs per request (from /proc/<pid>/stat) of several API processes, rounds alternating over them.
import { execSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { createDatabase, startApi, startDiscardingCollector, startLoadGenerator, startTemporal } from './scripts/bench/processes.ts';
import { seed } from './scripts/bench/seed.ts';
import { startBenchCluster } from './scripts/bench/postgres-cluster.ts';

const cluster = await startBenchCluster();
const [temporal, database] = await Promise.all([startTemporal(), createDatabase(cluster?.adminUrl)]);
const s = await seed(database.url);
const payloadKey = randomBytes(32).toString('base64');
const collector = await startDiscardingCollector();
const settings = { databaseUrl: database.url, temporalAddress: temporal.address, payloadKey, taskQueue: 'bench-no-worker' };
const variants: [string, Record<string, string>][] = JSON.parse(process.env.VARIANTS!).map(([n, e]: [string, Record<string, string>]) => [n, Object.fromEntries(Object.entries(e).map(([k, v]) => [k, v === '$C' ? collector.url : v]))]);
const apis = [];
for (const [name, env] of variants) apis.push({ name, server: await startApi({ ...settings, name, env }) });
const pidOf = (url: string) => Number(execSync(`ss -ltnpH 'sport = :${new URL(url).port}'`).toString().match(/pid=(\d+)/)![1]);
const cpu = (pid: number) => { const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' '); return (Number(f[11]) + Number(f[12])) * 10_000; }; // µs at 100 Hz
const gen = startLoadGenerator();
if (process.env.PIN) for (const a of apis) execSync(`taskset -apc ${process.env.PIN} ${pidOf(a.server.url)}`);
const runId = s.small.sampleRunId!;
const headers = { authorization: `Bearer ${s.small.secret}` };
const paths = (process.env.PATHS ?? 'get,health').split(',');
const res: Record<string, number[]> = {};
const ROUNDS = Number(process.env.ROUNDS ?? 5);
for (const p of paths) {
  // warm every process on this path
  for (const a of apis) await gen.measure({ url: a.server.url + (p === 'get' ? `/v1/agent-runs/${runId}` : '/health'), headers, connections: 50, warmupSeconds: 0, seconds: 1 });
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 ? [...apis].reverse() : apis;
    for (const a of order) {
      const pid = pidOf(a.server.url);
      const c0 = cpu(pid);
      const out = await gen.measure<{ ok: number; rps: number }>({ url: a.server.url + (p === 'get' ? `/v1/agent-runs/${runId}` : '/health'), headers, connections: 50, warmupSeconds: 0, seconds: Number(process.env.SECS ?? 4) });
      (res[`${p} ${a.name} µs`] ??= []).push(Math.round((cpu(pid) - c0) / out.ok));
      (res[`${p} ${a.name} rps`] ??= []).push(Math.round(out.rps));
    }
  }
}
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const [k, v] of Object.entries(res)) console.log(k.padEnd(36), 'median', med(v), ' rounds', v.join(' '));
await gen.stop();
for (const a of apis) await a.server.stop();
await collector.stop();
await database.drop();
cluster?.stop();
await temporal.stop();
process.exit(0);
