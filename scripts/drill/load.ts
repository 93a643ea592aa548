// The drill's load: runs with and without approval, approvals and cancellations over
// the API while faults happen, completion webhooks and chat streams. A client that
// behaves as the docs ask: every create carries an Idempotency-Key, a 503 or a dropped
// connection is retried (after Retry-After), and a 409 is believed. Every loop is
// bounded in count and time. It records what the API answered, so that the accounting
// can tell a false 409 (the run was waiting for its approval) from a true one.
import type { Rng } from './rng.ts';
import { sleep } from './cluster.ts';

export type RunKind = 'analysis' | 'approve' | 'cancel';

export interface DrillTenant {
  name: string;
  tenantId: string;
  /** A core key: creates, reads, cancels. */
  key: string;
  /** An approver key of the same tenant: decides approvals (a core key cannot). */
  approverKey: string;
}

export interface DrivenRun {
  runId: string;
  kind: RunKind;
  tenantId: string;
}

export interface LoadStats {
  runs: DrivenRun[];
  /** Creates that never got a run id within their time (each counted as a violation). */
  lostCreates: number;
  approvals: { applied: number; answered409: number; false409: number; retried: number };
  cancels: { accepted: number; answered409: number };
  chats: { ok: number; failed: number };
  /** Requests that got no HTTP answer, or a 502/503, and were retried. */
  retries: number;
}

const INPUTS: Record<RunKind, string[]> = {
  analysis: [
    'Review the vendor terms for renewal risk; then list the three largest obligations.',
    'Summarise the incident timeline. The outage lasted an hour.',
  ],
  approve: ['Tell the team channel that the release notes are out.', 'Post the weekly status to the webhook: all projects are on track.'],
  cancel: ['Publish to the webhook: the draft announcement is ready.'],
};
const TERMINAL = new Set(['completed', 'failed', 'needs_attention']);

interface Answer {
  status: number;
  json: any;
  retryAfterMs: number;
}

export class LoadDriver {
  readonly stats: LoadStats = {
    runs: [],
    lostCreates: 0,
    approvals: { applied: 0, answered409: 0, false409: 0, retried: 0 },
    cancels: { accepted: 0, answered409: 0 },
    chats: { ok: 0, failed: 0 },
    retries: 0,
  };

  constructor(
    private readonly apiUrls: () => string[],
    private readonly rng: Rng,
    private readonly seed: number,
    private readonly callTimeoutMs: number,
  ) {}

  /** One request to a random replica; no answer (or 502/503) is retried until `callTimeoutMs`. */
  private async call(method: string, path: string, key: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
    const deadline = Date.now() + this.callTimeoutMs;
    for (let attempt = 0; ; attempt++) {
      const urls = this.apiUrls();
      const url = urls[Math.floor(Math.random() * urls.length)]!;
      try {
        const res = await fetch(`${url}${path}`, {
          method,
          headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(15_000),
        });
        const text = await res.text();
        const retryAfterMs = Number(res.headers.get('retry-after') ?? 1) * 1_000;
        if ((res.status === 503 || res.status === 502) && Date.now() < deadline) {
          this.stats.retries++;
          await sleep(Math.min(retryAfterMs, 2_000));
          continue;
        }
        return { status: res.status, json: text ? JSON.parse(text) : null, retryAfterMs };
      } catch {
        if (Date.now() >= deadline) return { status: 0, json: null, retryAfterMs: 0 };
        this.stats.retries++;
        await sleep(Math.min(200 * 2 ** attempt, 2_000));
      }
    }
  }

  /** Tenant setup over the API: a completion webhook endpoint for every event. */
  async subscribe(tenant: DrillTenant, receiverUrl: string): Promise<void> {
    const r = await this.call('POST', '/v1/webhook-endpoints', tenant.key, { url: `${receiverUrl}/notifications` });
    if (r.status !== 201) throw new Error(`webhook endpoint not created: HTTP ${r.status}`);
  }

  private async getRun(tenant: DrillTenant, runId: string): Promise<any | null> {
    const r = await this.call('GET', `/v1/agent-runs/${runId}`, tenant.key);
    return r.status === 200 ? r.json : null;
  }

  /** Polls until `done` holds for the run, or `timeoutMs` passes. */
  private async waitFor(tenant: DrillTenant, runId: string, done: (run: any) => boolean, timeoutMs: number): Promise<any | null> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const run = await this.getRun(tenant, runId);
      if (run && done(run)) return run;
      await sleep(400);
    }
    return null;
  }

  /** Creates run number `n` of `kind` for `tenant`, drives its decision, and returns once it ended (or its time is up). */
  async drive(n: number, kind: RunKind, tenant: DrillTenant, runTimeoutMs: number): Promise<void> {
    const runId = await this.create(n, kind, tenant);
    if (!runId) return;
    if (kind === 'approve') await this.approve(tenant, runId, runTimeoutMs);
    if (kind === 'cancel') await this.cancel(tenant, runId, runTimeoutMs);
    await this.untilEnded(tenant, runId, runTimeoutMs);
  }

  /** Creates run number `n` of `kind`; its id, or null (counted lost) when no create was answered with a run. */
  async create(n: number, kind: RunKind, tenant: DrillTenant): Promise<string | null> {
    const inputs = INPUTS[kind];
    const input = inputs[n % inputs.length]!;
    const created = await this.call('POST', '/v1/agent-runs', tenant.key, { input }, { 'idempotency-key': `drill-${this.seed}-${n}` });
    if (created.status !== 201 && created.status !== 200) {
      this.stats.lostCreates++;
      return null;
    }
    const runId = created.json.run_id as string;
    this.stats.runs.push({ runId, kind, tenantId: tenant.tenantId });
    return runId;
  }

  /** Waits until the run awaits its approval (true), or ended or ran out of time (false). */
  async untilAwaitingApproval(tenant: DrillTenant, runId: string, timeoutMs: number): Promise<boolean> {
    const run = await this.waitFor(tenant, runId, (r) => r.status === 'awaiting_approval' || TERMINAL.has(r.status), timeoutMs);
    return run?.status === 'awaiting_approval';
  }

  /** Waits until `done` holds for the run's record; the record, or null when the time ran out. */
  until(tenant: DrillTenant, runId: string, done: (run: any) => boolean, timeoutMs: number): Promise<any | null> {
    return this.waitFor(tenant, runId, done, timeoutMs);
  }

  /** Waits until the run ended; its record, or null when the time ran out. */
  untilEnded(tenant: DrillTenant, runId: string, timeoutMs: number): Promise<any | null> {
    return this.waitFor(tenant, runId, (r) => TERMINAL.has(r.status), timeoutMs);
  }

  /** Approves the run (as drive does), once it awaits its approval. */
  approveRun(tenant: DrillTenant, runId: string, timeoutMs: number): Promise<void> {
    return this.approve(tenant, runId, timeoutMs);
  }

  /**
   * Approves as a client that trusts the API: GET, and while it says awaiting_approval, POST the
   * decision (one Idempotency-Key for every attempt). A 409 while GET, before and after it, says
   * the run awaits its approval is a false 409.
   */
  private async approve(tenant: DrillTenant, runId: string, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const waiting = await this.waitFor(tenant, runId, (r) => r.status === 'awaiting_approval' || TERMINAL.has(r.status), timeoutMs);
    if (waiting?.status !== 'awaiting_approval') return;
    while (Date.now() < deadline) {
      const before = await this.getRun(tenant, runId);
      if (before?.status !== 'awaiting_approval') return;
      const r = await this.call(
        'POST',
        `/v1/agent-runs/${runId}/approval`,
        tenant.approverKey,
        { decision: 'approve', reason: 'drill' },
        { 'idempotency-key': `approve-${runId}` },
      );
      if (r.status === 200) {
        this.stats.approvals.applied++;
        return;
      }
      if (r.status === 409) {
        this.stats.approvals.answered409++;
        const after = await this.getRun(tenant, runId);
        if (after?.status === 'awaiting_approval' && after.approval?.state === 'pending') this.stats.approvals.false409++;
        else return;
      }
      this.stats.approvals.retried++;
      await sleep(500);
    }
  }

  private async cancel(tenant: DrillTenant, runId: string, timeoutMs: number): Promise<void> {
    const waiting = await this.waitFor(tenant, runId, (r) => r.status === 'awaiting_approval' || TERMINAL.has(r.status), timeoutMs);
    if (!waiting || TERMINAL.has(waiting.status)) return;
    const r = await this.call('POST', `/v1/agent-runs/${runId}/cancel`, tenant.key, undefined, { 'idempotency-key': `cancel-${runId}` });
    if (r.status === 202) this.stats.cancels.accepted++;
    else if (r.status === 409) this.stats.cancels.answered409++;
  }

  /** One streamed chat answer, read to its end ([DONE]). A stream cut by a fault counts as failed, not as a violation. */
  async chat(tenant: DrillTenant): Promise<void> {
    const urls = this.apiUrls();
    const url = urls[Math.floor(this.rng() * urls.length)]!;
    try {
      const res = await fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'svc-workspace', stream: true, messages: [{ role: 'user', content: 'Outline a rollback plan for a schema change.' }] }),
        signal: AbortSignal.timeout(30_000),
      });
      const text = await res.text();
      if (res.status === 200 && text.includes('data: [DONE]')) this.stats.chats.ok++;
      else this.stats.chats.failed++;
    } catch {
      this.stats.chats.failed++;
    }
  }
}

/** The kind of run number `n`: half without approval, the rest approved, one in eight cancelled. */
export function kindOf(rng: Rng): RunKind {
  const x = rng();
  return x < 0.45 ? 'analysis' : x < 0.875 ? 'approve' : 'cancel';
}
