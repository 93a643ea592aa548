// Numbers and the report: per-measurement summaries, medians over repetitions,
// ratios against the anchors, the holds/does-not-hold table and the JSON file.
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { projectRoot } from '../../config/paths.ts';

/** One measurement (the measured part, after the warm-up). */
export interface LoadResult {
  rps: number;
  p50_ms: number;
  p99_ms: number;
  ok: number;
  failed: number;
  /** Responses by status code (load generator only). */
  statuses?: Record<string, number>;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  const i = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return Math.round(sorted[Math.max(0, i)]! * 100) / 100; // 0.01 ms
}

/** A LoadResult from per-call latencies (ms) over `seconds`. */
export function summarize(latencies: number[], seconds: number, failed: number): LoadResult {
  const s = [...latencies].sort((a, b) => a - b);
  return { rps: Math.round((s.length / seconds) * 10) / 10, p50_ms: percentile(s, 50), p99_ms: percentile(s, 99), ok: s.length, failed };
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Medians of each field over the repetitions of one phase. */
export function medianOf(rs: LoadResult[]): LoadResult {
  return {
    rps: median(rs.map((r) => r.rps)),
    p50_ms: median(rs.map((r) => r.p50_ms)),
    p99_ms: median(rs.map((r) => r.p99_ms)),
    ok: rs.reduce((n, r) => n + r.ok, 0),
    failed: rs.reduce((n, r) => n + r.failed, 0),
  };
}

export interface Row {
  target: string;
  /** What is compared, e.g. "req/s" or "p50 ms". */
  metric: string;
  service: number;
  anchor: number;
  ratio: number;
  /** The target, e.g. "≥ 0.9". */
  bound: string;
  holds: boolean;
  /** Failed (non-2xx, error) requests of service + anchor; a row with failures does not hold. */
  failed: number;
  /** What the reader needs beside the figures (row 11: the per-run counts), printed under the table. */
  note?: string;
  /** The figures behind the note, for the JSON report. */
  detail?: unknown;
}

const r3 = (x: number) => Math.round(x * 1000) / 1000;

/** ratio = service / anchor; holds when ratio ≥ min. */
export function atLeast(target: string, metric: string, service: number, anchor: number, min: number, failed: number): Row {
  const ratio = service / anchor;
  return { target, metric, service, anchor, ratio: r3(ratio), bound: `≥ ${min}`, holds: ratio >= min && failed === 0, failed };
}

/** ratio = service / anchor; holds when ratio ≤ max. */
export function atMost(target: string, metric: string, service: number, anchor: number, max: number, failed: number): Row {
  const ratio = service / anchor;
  return { target, metric, service, anchor, ratio: r3(ratio), bound: `≤ ${max}`, holds: ratio <= max && failed === 0, failed };
}

export function machineNote(): string {
  const cpus = os.cpus();
  return `${cpus.length} × ${cpus[0]?.model.trim() ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}, ${os.platform()} ${os.release()}`;
}

/** The Markdown table (also what docs/performance.md shows). */
/**
 * A time the issue bounds outright (the model's run to approval): it holds when the service's figure is
 * within `maxMs`; the ratio to the anchor measured beside it says what the model adds.
 */
export function withinMs(target: string, service: number, anchor: number, maxMs: number): Row {
  const ratio = anchor > 0 ? service / anchor : 0;
  return { target, metric: 'ms', service, anchor, ratio: r3(ratio), bound: `≤ ${maxMs} ms`, holds: service <= maxMs, failed: 0 };
}

/** A figure the issue bounds outright, with no anchor to compare it with (row 12): it holds when it is at most `max`. */
export function withinLimit(target: string, metric: string, value: number, max: number): Row {
  return { target, metric, service: value, anchor: Number.NaN, ratio: Number.NaN, bound: `≤ ${max} ${metric}`, holds: value <= max, failed: 0 };
}

/** A figure of the table: a dash where a row has none (no anchor). */
const cell = (x: number) => (Number.isFinite(x) ? String(x) : '—');

export function table(rows: Row[]): string {
  const lines = [
    '| Target | Metric | Service | Anchor | Ratio | Bound | Holds |',
    '|---|---|---:|---:|---:|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.target} | ${r.metric} | ${r.service} | ${cell(r.anchor)} | ${cell(r.ratio)} | ${r.bound} | ${r.holds ? 'holds' : 'does not hold'}${r.failed ? ` (${r.failed} failed)` : ''} |`,
    ),
  ];
  const notes = rows.filter((r) => r.note).map((r) => `- ${r.target.split(' ')[0]} ${r.note}`);
  return [...lines, ...(notes.length ? ['', ...notes] : [])].join('\n');
}

/** Writes bench-results/bench-<time>.json and .md; returns the .md path. */
export function writeReport(report: { at: string; settings: unknown; rows: Row[]; phases: unknown }): string {
  const dir = path.join(projectRoot, 'bench-results');
  mkdirSync(dir, { recursive: true });
  const stem = path.join(dir, `bench-${report.at.replace(/[:.]/g, '-')}`);
  writeFileSync(`${stem}.json`, `${JSON.stringify({ ...report, machine: machineNote() }, null, 2)}\n`);
  writeFileSync(`${stem}.md`, `${table(report.rows)}\n\nMachine: ${machineNote()}; ${report.at}\n`);
  return path.relative(projectRoot, `${stem}.md`);
}
