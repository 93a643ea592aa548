// The service's Prometheus metrics (prom-client), on one registry that runtime/metrics-server.ts
// serves. RED for HTTP per route template and status class; runs by state and time in each state;
// approval wait; model calls and tokens; tool calls and their duration; and, read from the
// database, approvals waiting and credits moved. Labels are bounded sets only: never a tenant id,
// a run id, a path with ids, or content.
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { RequestMetrics } from './request-metrics.ts';

export const registry = new Registry();

const registers = [registry];
const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const LONG_SECONDS = [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, 4 * 3600, 24 * 3600];

/** RED of the API, per method, route template (`unmatched` for an unknown path) and status class: see request-metrics.ts. */
export const requestMetrics = new RequestMetrics(
  {
    counter: 'gws_http_requests_total',
    counterHelp: 'HTTP requests answered, by method, route template and status class (2xx…5xx).',
    histogram: 'gws_http_request_duration_seconds',
    histogramHelp: 'Time to answer an HTTP request, to the end of its handling (for a stream, SSE: until the stream starts).',
  },
  SECONDS,
);
requestMetrics.register(registry);

export const metrics = {
  runsCreated: new Counter({ name: 'gws_runs_created_total', help: 'Runs created (a repeated Idempotency-Key is not counted).', registers }),
  runsEnded: new Counter({
    name: 'gws_runs_ended_total',
    help: 'Runs that reached a terminal state, by state.',
    labelNames: ['state'] as const,
    registers,
  }),
  runStateDuration: new Histogram({
    name: 'gws_run_state_duration_seconds',
    help: 'Time a run spent in a state, observed when it leaves it.',
    labelNames: ['state'] as const,
    buckets: LONG_SECONDS,
    registers,
  }),
  approvalWait: new Histogram({
    name: 'gws_approval_wait_seconds',
    help: 'Time from awaiting_approval to the decision (or the expiry).',
    buckets: LONG_SECONDS,
    registers,
  }),
  modelCalls: new Counter({
    name: 'gws_model_calls_total',
    help: 'Model calls, by provider, model alias and outcome (ok, error).',
    labelNames: ['provider', 'model', 'outcome'] as const,
    registers,
  }),
  modelTokens: new Counter({
    name: 'gws_model_tokens_total',
    help: 'Tokens of model calls as the provider reported them, by provider, model alias and kind (input, output).',
    labelNames: ['provider', 'model', 'kind'] as const,
    registers,
  }),
  toolCalls: new Counter({
    name: 'gws_tool_calls_total',
    help: "Tool calls of runs' steps, by tool (built-in or the operator's server tool) and outcome (done, failed, outcome_unknown…).",
    labelNames: ['tool', 'outcome'] as const,
    registers,
  }),
  toolDuration: new Histogram({
    name: 'gws_tool_call_duration_seconds',
    help: 'Time a tool call took.',
    labelNames: ['tool'] as const,
    buckets: SECONDS,
    registers,
  }),
};

let recording = true;
const noop = () => {};
const NOOP_SERIES = { inc: noop, dec: noop, set: noop, observe: noop, startTimer: () => () => 0 };

/**
 * Metrics off means off: a process that serves no metrics (METRICS_PORT unset, as for `npm start`)
 * records none. Every metric above becomes a no-op, labelled series included, and the request log does
 * not call requestMetrics at all (api/middleware/request-log.ts). Called once, at composition, before any request.
 */
export function stopRecordingMetrics(): void {
  recording = false;
  for (const metric of Object.values(metrics)) Object.assign(metric, { ...NOOP_SERIES, labels: () => NOOP_SERIES });
}

/** Whether this process records metrics (stopRecordingMetrics was not called). */
export const recordsMetrics = () => recording;

export interface CreditTotal {
  tenantClass: 'dev' | 'customer';
  use: 'run' | 'chat';
  reserved: number;
  settled: number;
  released: number;
}

let fromDatabase = false;

/**
 * The figures the database holds, read at each scrape: runs awaiting approval, and credits moved by
 * holds since the ledger began (exact, whatever retries did; one process reports them: the API).
 */
export function reportFromDatabase(read: { approvalsWaiting(): Promise<number>; creditTotals(): Promise<CreditTotal[]> }): void {
  if (fromDatabase) return;
  fromDatabase = true;
  new Gauge({
    name: 'gws_approvals_waiting',
    help: 'Runs awaiting approval now.',
    registers,
    async collect() {
      this.set(await read.approvalsWaiting().catch(() => Number.NaN));
    },
  });
  new Gauge({
    name: 'gws_credits',
    help: 'Credits moved by holds since the ledger began: reserved, settled (charged) and released, by tenant class (dev, customer) and use (run, chat). Monotonic: use rate() or increase().',
    labelNames: ['movement', 'tenant_class', 'use'] as const,
    registers,
    async collect() {
      // The database unreachable: the last figures stay, rather than the series vanishing from a rising gauge.
      const totals = await read.creditTotals().catch(() => null);
      if (!totals) return;
      this.reset();
      for (const t of totals) {
        for (const movement of ['reserved', 'settled', 'released'] as const) this.set({ movement, tenant_class: t.tenantClass, use: t.use }, t[movement]);
      }
    },
  });
}
