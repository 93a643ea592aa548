// After the faults: what Postgres and Temporal say, checked against the service's
// promises. Every broken promise is a violation with a name; webhook duplicates are
// counted and reported but are not violations (delivery is at-least-once).
import { Client, Connection } from '@temporalio/client';
import pg from 'pg';
import { webhookIdFor } from '../../services/webhook-endpoints.ts';
import type { TemporalConnectionSettings } from '../../config/temporal-connection-settings.ts';
import { temporalConnectOptions } from '../../runtime/temporal-connection.ts';
import type { NotificationEvent } from '../../domain/runs/progress.ts';
import { type ErrorLine, sleep } from './cluster.ts';
import type { FaultRecord } from './faults.ts';
import type { LoadStats } from './load.ts';
import type { Receiver } from './receiver.ts';

export interface Violation {
  invariant: string;
  detail: string;
}

export interface Accounting {
  runs: number;
  byStatus: Record<string, number>;
  violations: Violation[];
  duplicateWebhooks: number;
  duplicateToolDeliveries: number;
  pendingNotifications: number;
  errorLinesInOutage: number;
  outageMinutes: number;
}

const TERMINAL = new Set(['completed', 'failed', 'needs_attention']);
/** Longer than a workflow task's timeout (10 s) after a killed worker, with room for the retry. */
const WORKFLOW_CLOSE_GRACE_MS = 60_000;
/** The target: at most 20 error-level lines for a 60 s outage, across all processes. */
export const MAX_ERROR_LINES_PER_OUTAGE_MINUTE = 20;
/** Lines logged this long after an outage ended still belong to it (reconnects, the "back" line). */
const OUTAGE_TAIL_MS = 15_000;

export async function account(input: {
  databaseUrl: string;
  /** As the cluster's services connect (Cluster.temporal). */
  temporal: TemporalConnectionSettings;
  tenantIds: string[];
  load: LoadStats;
  receiver: Receiver;
  faults: FaultRecord[];
  errorLines: ErrorLine[];
}): Promise<Accounting> {
  const violations: Violation[] = [];
  const violate = (invariant: string, detail: string) => violations.push({ invariant, detail });
  const db = new pg.Client({ connectionString: input.databaseUrl });
  await db.connect();
  const connection = await Connection.connect(temporalConnectOptions(input.temporal));
  const temporal = new Client({ connection, namespace: input.temporal.namespace });
  try {
    const { rows: runs } = await db.query<{
      id: string;
      status: string;
      usage: { charged?: number } | null;
      approval: { state?: string } | null;
      failure: { code?: string } | null;
      receipt: any;
    }>('select id, status, usage, approval, failure, receipt from runs where tenant_id = any($1)', [input.tenantIds]);
    const byStatus: Record<string, number> = {};
    for (const run of runs) byStatus[run.status] = (byStatus[run.status] ?? 0) + 1;
    const runIds = new Set(runs.map((r) => r.id));

    // Runs and workflows, one for one. A run's projection turns terminal a few workflow tasks before
    // its execution closes (its notifications' children start in between), and a worker killed in
    // that gap leaves them to the next worker after a task timeout: so a terminal run's workflow is
    // given until WORKFLOW_CLOSE_GRACE_MS to close, and only one still running then is stuck.
    const graceEnds = Date.now() + WORKFLOW_CLOSE_GRACE_MS;
    for (const run of runs) {
      const workflow = await workflowStatus(temporal, run.id, TERMINAL.has(run.status) ? graceEnds : 0);
      const neverStarted = run.failure?.code === 'start_failed';
      if (!workflow && !neverStarted) violate('run_without_workflow', run.id);
      if (TERMINAL.has(run.status)) {
        if (workflow === 'RUNNING') violate('terminal_run_with_running_workflow', run.id);
      } else if (!(run.status === 'awaiting_approval' && workflow === 'RUNNING')) {
        violate('run_not_settled', `${run.id} is ${run.status} (workflow ${workflow ?? 'none'})`);
      }
    }
    for await (const wf of temporal.workflow.list({ query: `WorkflowType = 'agentRunWorkflow'` })) {
      if (!runIds.has(wf.workflowId)) violate('workflow_without_run', wf.workflowId);
    }
    if (input.load.lostCreates > 0) violate('create_without_answer', `${input.load.lostCreates} create(s) never answered with a run`);

    // Money: holds end with their run; one charge per run, equal to its recorded usage.
    const { rows: holds } = await db.query<{ run_id: string; step: string; status: string }>(
      'select run_id, step, status from ledger_holds where tenant_id = any($1)',
      [input.tenantIds],
    );
    const statusOf = new Map(runs.map((r) => [r.id, r.status]));
    const openHolds = new Map<string, number>();
    for (const h of holds) {
      if (h.status !== 'open') continue;
      if (h.step === 'chat') violate('chat_hold_open', h.run_id);
      else if (TERMINAL.has(statusOf.get(h.run_id) ?? '')) violate('hold_on_terminal_run', h.run_id);
      else openHolds.set(h.run_id, (openHolds.get(h.run_id) ?? 0) + 1);
    }
    for (const run of runs) {
      if (run.status === 'awaiting_approval' && (openHolds.get(run.id) ?? 0) !== 1) violate('open_run_without_one_hold', run.id);
    }
    const { rows: charges } = await db.query<{ run_id: string; n: string; total: string }>(
      `select run_id, count(*) as n, sum(amount) as total from ledger_entries where kind = 'charge' and tenant_id = any($1) and run_id is not null group by run_id`,
      [input.tenantIds],
    );
    const chargeOf = new Map(charges.map((c) => [c.run_id, c]));
    for (const c of charges) if (Number(c.n) > 1) violate('double_charge', `${c.run_id}: ${c.n} charges`);
    for (const run of runs) {
      const charged = Number(chargeOf.get(run.id)?.total ?? 0);
      if (TERMINAL.has(run.status) && charged !== (run.usage?.charged ?? 0))
        violate('charge_not_usage', `${run.id}: charged ${charged}, usage says ${run.usage?.charged ?? 0}`);
    }

    // Exactly one audit record per applied decision.
    const { rows: audits } = await db.query<{ target: string; n: string }>(
      `select target, count(*) as n from audit_events where tenant_id = any($1) and action like 'run.approval.%' group by target`,
      [input.tenantIds],
    );
    const auditsOf = new Map(audits.map((a) => [a.target, Number(a.n)]));
    for (const run of runs) {
      const decided = run.approval?.state === 'approved' || run.approval?.state === 'rejected';
      const n = auditsOf.get(`run:${run.id}`) ?? 0;
      if (decided && n !== 1) violate('audit_records', `${run.id}: ${n} audit record(s) for one decision`);
      if (!decided && n !== 0) violate('audit_records', `${run.id}: ${n} audit record(s) without a decision`);
    }

    // Webhooks: every delivered notification arrived at least once; duplicates counted.
    const { rows: deliveries } = await db.query<{ run_id: string; event_type: string; status: string }>(
      'select run_id, event_type, status from webhook_deliveries where tenant_id = any($1)',
      [input.tenantIds],
    );
    for (const d of deliveries) {
      if (d.status === 'delivered' && !input.receiver.notifications.has(webhookIdFor(d.run_id, d.event_type as NotificationEvent)))
        violate('notification_not_received', `${d.run_id} ${d.event_type}`);
    }
    for (const run of runs) {
      const performed: string[] = run.receipt?.action_boundary?.effects_performed ?? [];
      for (const effect of performed) {
        const step = effect.split(':')[1];
        if (!input.receiver.deliveries.has(`${run.id}:${step}`)) violate('effect_not_received', `${run.id}:${step}`);
      }
    }
    const duplicates = (counts: Map<string, number>) => [...counts.values()].reduce((sum, n) => sum + n - 1, 0);

    if (input.load.approvals.false409 > 0) violate('false_409', `${input.load.approvals.false409} approval(s) answered 409 while the run awaited approval`);

    // Calm outages: error-level lines while a dependency was down, per minute of outage.
    const windows = input.faults.filter((f) => f.outage).map((f) => [f.startedAt, f.startedAt + f.downMs + OUTAGE_TAIL_MS] as const);
    const outageMs = input.faults.filter((f) => f.outage).reduce((sum, f) => sum + f.downMs, 0);
    const errorLinesInOutage = input.errorLines.filter((l) => windows.some(([from, to]) => l.at >= from && l.at <= to)).length;
    const outageMinutes = outageMs / 60_000;
    if (outageMs > 0 && errorLinesInOutage > MAX_ERROR_LINES_PER_OUTAGE_MINUTE * Math.max(1, Math.ceil(outageMinutes))) {
      violate('outage_log_flood', `${errorLinesInOutage} error-level lines in ${(outageMs / 1000).toFixed(0)} s of outage`);
    }

    return {
      runs: runs.length,
      byStatus,
      violations,
      duplicateWebhooks: duplicates(input.receiver.notifications),
      duplicateToolDeliveries: duplicates(input.receiver.deliveries),
      pendingNotifications: deliveries.filter((d) => d.status === 'pending').length,
      errorLinesInOutage,
      outageMinutes: Math.round(outageMinutes * 100) / 100,
    };
  } finally {
    await db.end();
    await connection.close();
  }
}

/** The workflow's status; while it is RUNNING and `waitUntil` is ahead, asks again until it closes. */
async function workflowStatus(temporal: Client, workflowId: string, waitUntil: number): Promise<string | null> {
  const asked = Date.now();
  for (let attempt = 0; ; attempt++) {
    const status = await temporal.workflow
      .getHandle(workflowId)
      .describe()
      .then((d) => d.status.name)
      .catch(() => null);
    if (status !== 'RUNNING' || Date.now() >= waitUntil) {
      if (attempt > 0)
        console.log(`drill: ${workflowId}'s workflow ${status === 'RUNNING' ? 'still running' : 'closed'} after ${((Date.now() - asked) / 1000).toFixed(1)} s`);
      return status;
    }
    await sleep(500);
  }
}
