// The drill's report: a table for people, then one last line of JSON for machines.
import type { Accounting } from './accounting.ts';
import type { FaultRecord } from './faults.ts';
import type { LoadStats } from './load.ts';

export interface DrillSummary {
  seed: number;
  quick: boolean;
  elapsed_s: number;
  runs: number;
  by_status: Record<string, number>;
  faults: number;
  fault_kinds: Record<string, number>;
  outage_s: number;
  approvals_applied: number;
  answered_409: number;
  false_409: number;
  cancels: number;
  chats_ok: number;
  chats_cut: number;
  client_retries: number;
  duplicate_webhooks: number;
  duplicate_tool_deliveries: number;
  pending_notifications: number;
  error_lines_in_outage: number;
  error_lines_per_outage_minute: number;
  violations: number;
  violation_kinds: Record<string, number>;
}

export function printReport(input: {
  seed: number;
  quick: boolean;
  elapsedMs: number;
  load: LoadStats;
  faults: FaultRecord[];
  accounting: Accounting;
}): DrillSummary {
  const { load, faults, accounting } = input;
  const count = (keys: string[]) => {
    const counts: Record<string, number> = {};
    for (const k of keys) counts[k] = (counts[k] ?? 0) + 1;
    return counts;
  };
  const outageMs = faults.filter((f) => f.outage).reduce((sum, f) => sum + f.downMs, 0);
  const summary: DrillSummary = {
    seed: input.seed,
    quick: input.quick,
    elapsed_s: Math.round(input.elapsedMs / 1000),
    runs: accounting.runs,
    by_status: accounting.byStatus,
    faults: faults.length,
    fault_kinds: count(faults.map((f) => f.kind)),
    outage_s: Math.round(outageMs / 1000),
    approvals_applied: load.approvals.applied,
    answered_409: load.approvals.answered409,
    false_409: load.approvals.false409,
    cancels: load.cancels.accepted,
    chats_ok: load.chats.ok,
    chats_cut: load.chats.failed,
    client_retries: load.retries,
    duplicate_webhooks: accounting.duplicateWebhooks,
    duplicate_tool_deliveries: accounting.duplicateToolDeliveries,
    pending_notifications: accounting.pendingNotifications,
    error_lines_in_outage: accounting.errorLinesInOutage,
    error_lines_per_outage_minute: accounting.outageMinutes > 0 ? Math.round((accounting.errorLinesInOutage / accounting.outageMinutes) * 10) / 10 : 0,
    violations: accounting.violations.length,
    violation_kinds: count(accounting.violations.map((v) => v.invariant)),
  };

  console.log('\nfaults');
  for (const f of faults)
    console.log(`  ${new Date(f.startedAt).toISOString().slice(11, 19)}  ${f.kind.padEnd(26)} ${f.target.padEnd(12)} ${(f.downMs / 1000).toFixed(1)} s`);
  console.log('\nresults');
  const rows: [string, string | number][] = [
    [
      'runs',
      `${summary.runs} (${Object.entries(summary.by_status)
        .map(([s, n]) => `${s} ${n}`)
        .join(', ')})`,
    ],
    [
      'faults',
      `${summary.faults} (${Object.entries(summary.fault_kinds)
        .map(([k, n]) => `${k} ${n}`)
        .join(', ')})`,
    ],
    ['dependency outage', `${summary.outage_s} s`],
    ['approvals applied', summary.approvals_applied],
    ['409 answers / false 409s', `${summary.answered_409} / ${summary.false_409}`],
    ['cancellations', summary.cancels],
    ['chat streams ok / cut by a fault', `${summary.chats_ok} / ${summary.chats_cut}`],
    ['client retries (503 or no answer)', summary.client_retries],
    ['duplicate webhooks (at-least-once)', `${summary.duplicate_webhooks} notifications, ${summary.duplicate_tool_deliveries} tool deliveries`],
    ['notifications still pending', summary.pending_notifications],
    ['error lines in outages', `${summary.error_lines_in_outage} (${summary.error_lines_per_outage_minute} per outage minute)`],
    ['violations', summary.violations],
  ];
  for (const [label, value] of rows) console.log(`  ${label.padEnd(36)} ${value}`);
  for (const v of accounting.violations.slice(0, 50)) console.log(`  VIOLATION ${v.invariant}: ${v.detail}`);
  console.log(JSON.stringify(summary));
  return summary;
}
