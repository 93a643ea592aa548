// What the API does with runs: create (idempotently) and start the run's
// workflow, read and list the projection, deliver approval decisions and
// cancellations to the workflow.
import { metrics } from './metrics.ts';
import { randomUUID } from 'node:crypto';
import { type Client, isGrpcDeadlineError, isGrpcServiceError, WorkflowUpdateFailedError, WorkflowUpdateRPCTimeoutOrCancelledError } from '@temporalio/client';
import type { Db } from '../db/client.ts';
import { digestOf } from '../domain/digest.ts';
import { errors } from '../domain/errors.ts';
import type { ModelId } from '../domain/models.ts';
import { isTerminal } from '../domain/runs/states.ts';
import {
  ALREADY_APPROVED,
  APPROVER_NOT_ALLOWED,
  type ApprovalDecision,
  type ApprovalOutcome,
  approvalUpdate,
  decisionSubject,
  NOT_AWAITING_APPROVAL,
  STALE_APPROVAL,
} from '../workflows/messages.ts';
import { callArguments, changedFixedArguments } from '../domain/agent/fixed-arguments.ts';
import { argumentProblems, isKnownTool, protocolArgumentProblems } from '../domain/agent/tool-args.ts';
import { protocolEffectOf } from '../domain/agent/protocol-tools.ts';
import type { Plan } from '../domain/planning/plan.ts';
import type { ApprovalEffect } from '../domain/runs/run-types.ts';
import { findAuditEvent, recordAuditOnce } from './audit.ts';
import { runWorkflowExists, startRunWorkflow } from './run-workflow.ts';
import { tenantById } from './tenants.ts';
import { cancelBeforeStart, createRun, getRun, listRuns, markStartFailed, type RunCursor, type RunFilters, type RunRow } from './runs.ts';

/**
 * A reachability probe that succeeded this recently stands for the next calls: a probe per call
 * would double the RPCs of every create (issue 14 measured creation at 0.57–0.79× a bare start).
 * A call that then fails as an outage forgets it, so the next request probes again.
 */
export const PROBE_FRESH_MS = 1_000;
/** How long an approval waits for a workflow that is behind its record (replaying after a worker died) before a 503. */
export const APPROVAL_CATCH_UP_MS = 4_000;

export interface RunControlDeps {
  db: Db;
  client: Client;
  taskQueue: string;
  approvalTimeoutMs: number;
  /**
   * The deadline the client's connection gives each call (callDeadline in
   * runtime/temporal-connection.ts), named in the 503 that a call past it answers.
   */
  temporalDeadlineMs: number;
  /** Fails fast (without retries) when Temporal is unreachable; checked before each call when given. */
  probe?: () => Promise<void>;
  /** Refuses a model the tenant's routing policy cannot route (409 model_not_routable) before a run is stored. */
  checkRoute?: (tenantId: string, model: ModelId) => Promise<void>;
}

export interface CreateRunRequest {
  input: string;
  memory: boolean;
  model: ModelId;
}

/** What the Idempotency-Key binds: the default model is left out, so keys from before runs took a model still match. */
function requestDigest(request: CreateRunRequest): string {
  const { model, ...rest } = request;
  return digestOf(model === 'svc-workspace' ? rest : request);
}

function isAlreadyClosed(err: unknown): boolean {
  const e = err as { name?: string; code?: number; message?: string };
  return e?.name === 'WorkflowNotFoundError' || /already completed|not found/i.test(e?.message ?? '');
}

/** The reachability probe failed: Temporal is down, so the call was not attempted. */
class TemporalUnreachable extends Error {
  override name = 'TemporalUnreachable';
}

const GRPC_DEADLINE_EXCEEDED = 4;
const GRPC_FAILED_PRECONDITION = 9;
const GRPC_UNAVAILABLE = 14;

/**
 * Temporal refused an Update because the workflow cannot take one now (WorkflowNotReady,
 * FAILED_PRECONDITION): its last workflow task failed or timed out and is being retried, as under
 * a worker overloaded past the task's timeout. Nothing was recorded; the same Update may be sent again.
 */
function isWorkflowNotReady(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = (e as { cause?: unknown }).cause) {
    if (isGrpcServiceError(e) && e.code === GRPC_FAILED_PRECONDITION) return true;
  }
  return false;
}

/** Temporal (or, for an Update, its workers) did not answer in time or could not be reached. */
function isTemporalOutage(err: unknown): boolean {
  if (err instanceof TemporalUnreachable || err instanceof WorkflowUpdateRPCTimeoutOrCancelledError || isGrpcDeadlineError(err)) return true;
  for (let e: unknown = err; e instanceof Error; e = (e as { cause?: unknown }).cause) {
    if (isGrpcServiceError(e) && (e.code === GRPC_UNAVAILABLE || e.code === GRPC_DEADLINE_EXCEEDED)) return true;
  }
  return false;
}

/**
 * The Update id of an approval: fixed by the approver's key and the Idempotency-Key, so Temporal applies
 * a retried decision once, and two approvers sending the same Idempotency-Key are two decisions.
 */
function approvalUpdateId(approverKeyId: string, requestKey: string | null): string {
  return requestKey ? `approval:${digestOf(`${approverKeyId}\n${requestKey}`).slice(7, 39)}` : `approval:${randomUUID()}`;
}

export function runControl(deps: RunControlDeps) {
  const deadlineSeconds = Math.ceil(deps.temporalDeadlineMs / 1000);
  // Tenant names never change, so each is read once per process (for the Temporal UI's run summary).
  const tenantNames = new Map<string, string>();
  async function tenantNameOf(tenantId: string): Promise<string> {
    let name = tenantNames.get(tenantId);
    if (name === undefined) {
      name = (await tenantById(deps.db, tenantId)).name;
      tenantNames.set(tenantId, name);
    }
    return name;
  }

  /**
   * Runs one Temporal call. The probe first (its own connection, no retries,
   * at most 2 s; skipped within PROBE_FRESH_MS of one that succeeded) answers
   * "unreachable" at once: the API's client retries UNAVAILABLE with backoff,
   * and a retry pending past the answer would outlive the request (and, at
   * shutdown, the connection). The call itself has the connection's deadline,
   * which also ends an Update that no worker picks up.
   */
  async function callTemporal<T>(call: () => Promise<T>): Promise<T> {
    await probeUnlessFresh();
    try {
      return await call();
    } catch (err) {
      if (isTemporalOutage(err)) probedAt = 0;
      throw err;
    }
  }

  let probedAt = 0;
  let probing: Promise<void> | null = null;
  /** Probes Temporal unless a probe succeeded within PROBE_FRESH_MS; concurrent callers share one probe. */
  async function probeUnlessFresh(): Promise<void> {
    if (!deps.probe || Date.now() - probedAt < PROBE_FRESH_MS) return;
    probing ??= deps.probe().then(
      () => {
        probedAt = Date.now();
        probing = null;
      },
      (err: unknown) => {
        probing = null;
        throw new TemporalUnreachable('Temporal did not answer its health check', { cause: err });
      },
    );
    await probing;
  }

  /**
   * Starts the run's workflow (id = run id) unless it exists. Safe to repeat:
   * a running workflow is reused, a closed one is left alone.
   */
  async function ensureStarted(run: RunRow): Promise<void> {
    const tenantName = await tenantNameOf(run.tenantId);
    try {
      await callTemporal(() => startRunWorkflow(deps.client, { taskQueue: deps.taskQueue, approvalTimeoutMs: deps.approvalTimeoutMs }, run, tenantName));
    } catch (err) {
      if (isTemporalOutage(err)) throw errors.workflowServiceUnavailable('start', deadlineSeconds);
      throw err;
    }
  }

  return {
    /** 'created' (201) or 'replayed' (200); a reused key with another body throws 422. */
    async create(tenantId: string, idempotencyKey: string | null, request: CreateRunRequest) {
      await deps.checkRoute?.(tenantId, request.model);
      const outcome = await createRun(deps.db, {
        tenantId,
        idempotencyKey,
        requestDigest: requestDigest(request),
        input: request.input,
        memory: request.memory,
        model: request.model,
      });
      if (outcome.kind === 'key_reused') throw errors.idempotencyKeyReused();
      // Also on replay: if the first attempt stored the row but failed to start, this completes it.
      if (outcome.kind === 'created' || !isTerminal(outcome.run.status)) {
        try {
          await ensureStarted(outcome.run);
        } catch (err) {
          // With a key, the caller's retry completes the start; without one, nothing can, so the row says so.
          if (!idempotencyKey) await markStartFailed(deps.db, outcome.run.id);
          throw err;
        }
      }
      if (outcome.kind === 'created') metrics.runsCreated.inc();
      return { created: outcome.kind === 'created', run: outcome.run };
    },

    get(tenantId: string, runId: string): Promise<RunRow> {
      return getRun(deps.db, tenantId, runId).then((run) => {
        if (!run) throw errors.notFound('No such run.');
        return run;
      });
    },

    list(tenantId: string, filters: RunFilters, page: { limit: number; after?: RunCursor }) {
      return listRuns(deps.db, tenantId, filters, page);
    },

    /**
     * Delivers the decision as a Temporal Update; its validator refuses unless the run awaits approval (409).
     * With an Idempotency-Key the Update id comes from the key, so Temporal applies a retried decision once,
     * and its audit event (written by the workflow) is keyed by run and Update id, so it is recorded once. The key's first body is
     * kept as that event's digest: a repeat with the same body answers as the first did (even after the run
     * ended, without asking Temporal); with another body, 422 and nothing is written.
     */
    async decide(
      tenantId: string,
      runId: string,
      request: Omit<ApprovalDecision, 'edits'> & { edits?: { step_id: string; arguments: Record<string, unknown> }[] },
      requestKey: string | null,
      approver: { keyId: string; name: string },
    ): Promise<RunRow> {
      const run = await this.get(tenantId, runId);
      const { edits, ...rest } = request;
      const decision: ApprovalDecision = { ...rest, ...(edits ? { edits: checkedEdits(run, request) } : {}) };
      const updateId = approvalUpdateId(approver.keyId, requestKey);
      const eventKey = `run:${run.id}:${updateId}`;
      const requestDigest = digestOf(decisionSubject(decision));
      if (requestKey) {
        const recorded = await findAuditEvent(deps.db, tenantId, eventKey);
        if (recorded) {
          if (recorded.digest !== requestDigest) throw errors.approvalKeyReused();
          return run;
        }
      }
      const outcome = await this.deliverDecision(tenantId, run.id, () =>
        deps.client.workflow
          .getHandle(run.id)
          .executeUpdate(approvalUpdate, { args: [decision, { channel: 'api', key_id: approver.keyId, name: approver.name }], updateId }),
      );
      // Temporal answers a known Update id with that Update's outcome, whatever this request's body says.
      if (outcome.decision !== decision.decision) throw errors.approvalKeyReused();
      // The workflow audited the decision before answering (same event key); runs that decided on
      // code from before that did not, so the API records it then, once.
      const event =
        (await findAuditEvent(deps.db, tenantId, eventKey)) ??
        (
          await recordAuditOnce(deps.db, {
            tenantId,
            keyId: approver.keyId,
            action: `run.approval.${decision.decision}`,
            target: `run:${run.id}`,
            subject: decisionSubject(decision),
            eventKey,
          })
        ).event;
      // A concurrent request with the same key and another reason recorded first.
      if (event.digest !== requestDigest) throw errors.approvalKeyReused();
      return this.get(tenantId, runId);
    },

    /**
     * What an approval with these edits would send, checked as the decision checks it (400 naming the field),
     * with each edited effect's new digest beside the proposed one. Nothing is recorded or sent.
     */
    async previewEdits(tenantId: string, runId: string, edits: { step_id: string; arguments: Record<string, unknown> }[]): Promise<ApprovalEffect[]> {
      const run = await this.get(tenantId, runId);
      const approval = run.approval as { state: string; effects: ApprovalEffect[] } | null;
      if (run.status !== 'awaiting_approval' || approval?.state !== 'pending') throw errors.runNotAwaitingApproval(run.status);
      const checked = new Map(checkedEdits(run, { decision: 'approve', edits }).map((e) => [e.step_id, e]));
      return approval.effects.map((effect) => {
        const edit = checked.get(effect.step_id);
        if (!edit || edit.args_digest === effect.args_digest) return effect;
        return { ...effect, arguments: edit.arguments, args_digest: edit.args_digest, proposed_digest: effect.proposed_digest ?? effect.args_digest };
      });
    },

    /**
     * Sends the approval Update. Its validator refuses unless the workflow awaits approval; a refusal is a 409
     * only when the run's record agrees. While the record says awaiting_approval, the workflow is behind it (a
     * worker died after recording the move and its replacement is replaying, so the decision met the replayed
     * state), or Temporal says the workflow is not ready (its last task failed or timed out and is retried): the
     * Update is sent again, with backoff, for up to APPROVAL_CATCH_UP_MS, then answered 503 with Retry-After. A
     * refused Update leaves nothing in the history, so sending it again applies it at most once.
     */
    async deliverDecision(tenantId: string, runId: string, send: () => Promise<ApprovalOutcome>): Promise<ApprovalOutcome> {
      const giveUpAt = Date.now() + APPROVAL_CATCH_UP_MS;
      for (let pause = 50; ; pause = Math.min(pause * 2, 1_000)) {
        try {
          return await callTemporal(send);
        } catch (err) {
          if (isTemporalOutage(err)) throw errors.decisionNotConfirmed(deadlineSeconds);
          const cause = (err as { cause?: { type?: string; message?: string } }).cause;
          if (err instanceof WorkflowUpdateFailedError && cause?.type === STALE_APPROVAL) {
            const digest = /sha256:[0-9a-f]{64}/.exec(cause.message ?? '')?.[0];
            throw digest ? errors.approvalStale(digest) : errors.approvalUnbound();
          }
          if (err instanceof WorkflowUpdateFailedError && cause?.type === ALREADY_APPROVED) throw errors.alreadyApproved();
          if (err instanceof WorkflowUpdateFailedError && cause?.type === APPROVER_NOT_ALLOWED) throw errors.approverNotAllowed();
          const closed = isAlreadyClosed(err);
          const notReady = isWorkflowNotReady(err);
          if (!closed && !notReady && !(err instanceof WorkflowUpdateFailedError && cause?.type === NOT_AWAITING_APPROVAL)) throw err;
          if (!notReady) {
            const latest = await this.get(tenantId, runId);
            if (closed || latest.status !== 'awaiting_approval') throw errors.runNotAwaitingApproval(latest.status);
          }
          if (Date.now() + pause > giveUpAt) throw errors.approvalNotSettled();
          await new Promise((r) => setTimeout(r, pause));
        }
      }
    },

    /** Requests cancellation; the workflow releases the hold and ends failed (code cancelled). */
    async cancel(tenantId: string, runId: string): Promise<RunRow> {
      const run = await this.get(tenantId, runId);
      if (isTerminal(run.status)) throw errors.runAlreadyTerminal(run.status);
      try {
        await callTemporal(() => deps.client.workflow.getHandle(run.id).cancel());
      } catch (err) {
        if (isTemporalOutage(err)) throw errors.workflowServiceUnavailable('cancel', deadlineSeconds);
        if (!isAlreadyClosed(err)) throw err;
        // Temporal says "not found" both for a closed workflow and for one that never started.
        if (!(await callTemporal(() => runWorkflowExists(deps.client, run.id)))) {
          // The row was written but its workflow never started: nothing was reserved or done, so the run ends here.
          await cancelBeforeStart(deps.db, run.id);
          return this.get(tenantId, runId);
        }
        const latest = await this.get(tenantId, runId);
        throw errors.runAlreadyTerminal(latest.status);
      }
      return this.get(tenantId, runId);
    },
  };
}

export type RunControl = ReturnType<typeof runControl>;

/**
 * Edited arguments, checked here (the contract layer's 4xx) against the input schema the plan recorded
 * for the step's tool (a built-in tool's own schema): only an approval may carry them, and only for an
 * external step awaiting it.
 */
function checkedEdits(run: RunRow, request: { decision: string; edits?: { step_id: string; arguments: Record<string, unknown> }[] }) {
  const plan = run.plan as Plan | null;
  const awaiting = new Set(((run.approval as { effects?: ApprovalEffect[] } | null)?.effects ?? []).map((e) => e.step_id));
  return (request.edits ?? []).map((edit, i) => {
    const param = `edits[${i}]`;
    if (request.decision !== 'approve') throw errors.approvalEditInvalid(param, 'arguments can be edited only with an approval.');
    const step = plan?.steps.find((s) => s.id === edit.step_id);
    const known =
      plan?.protocol === 'tool_calls'
        ? protocolEffectOf(step?.tool ?? '', plan.serverTools ?? {}) !== null
        : isKnownTool(step?.tool ?? '', plan?.serverTools ?? {});
    // A tool-calling run's earlier rounds are decided: only the effects awaiting this decision can be edited.
    const pending = plan?.protocol !== 'tool_calls' || awaiting.has(edit.step_id);
    if (step?.effect !== 'external' || !known || !pending) {
      throw errors.approvalEditInvalid(`${param}.step_id`, 'must name an external step awaiting approval.');
    }
    // A tool-calling run's built-ins have the protocol's own schemas (a delivery's `to` and `message`).
    const problems = plan?.protocol === 'tool_calls' ? protocolArgumentProblems : argumentProblems;
    const serverTools = plan?.serverTools ?? {};
    const problem = problems(step.tool, edit.arguments, serverTools);
    if (problem) throw errors.approvalEditInvalid(`${param}.arguments`, problem);
    // The operator's fixed arguments stay as the operator set them: an edit may leave them out, not change them.
    const [changed] = changedFixedArguments(step.tool, edit.arguments, serverTools);
    if (changed !== undefined) throw errors.approvalEditInvalid(`${param}.arguments.${changed}`, 'is fixed by the operator for this tool.');
    const args = callArguments(step.tool, edit.arguments, serverTools);
    return { step_id: edit.step_id, arguments: args, args_digest: digestOf(args) };
  });
}
