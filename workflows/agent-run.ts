// One workflow per run: estimate, reserve, plan, approval, execute, verify,
// settle. Deterministic orchestration only; every side effect is an activity.
import {
  ApplicationFailure,
  ActivityFailure,
  allHandlersFinished,
  CancellationScope,
  condition,
  currentUpdateInfo,
  isCancellation,
  log,
  ParentClosePolicy,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  startChild,
  TemporalFailure,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { createActivities } from '../activities/index.ts';
import type { Plan, PlanStep } from '../domain/planning/plan.ts';
import type { LoopStop } from '../domain/runs/run-types.ts';
import type { RunProjectionPatch, RunTransition } from '../domain/runs/transition.ts';
import { isTerminal, nextStatus, type RunEvent, type RunStatus, type RunStep } from '../domain/runs/states.ts';
import type { ApprovalRecord, StepResult } from '../domain/runs/run-types.ts';
import type { ApprovalChannel } from '../activities/approval.ts';
import type { NotificationEvent } from '../domain/runs/progress.ts';
import {
  approvalSignal,
  approvalUpdate,
  type ApprovalDecision,
  type ApprovalMeta,
  NOT_AWAITING_APPROVAL,
  type RunLiveState,
  stateQuery,
  WEBHOOK_NOT_SENT,
} from './messages.ts';
import { currentDetailsOf, type PendingEffect, progressOf } from './run-details.ts';
import { executeWithModel, type LoopResult, type ModelContext, planWithModel } from './agent-loop.ts';
import { notifyRunWorkflow } from './notify-run.ts';
import { RunStatusKey, TenantIdKey } from '../domain/runs/search-attributes.ts';
import type { AgentRunInput } from '../domain/runs/run-input.ts';

export type { AgentRunInput } from '../domain/runs/run-input.ts';

type Activities = ReturnType<typeof createActivities>;

// Projection, ledger, estimate, plan, verify and memory activities are idempotent, so they retry for as
// long as a database outage lasts (no attempt limit), at most every 30 s. Compensation (releaseCredits)
// is one of them: it cannot give up either.
const acts = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumInterval: '30 seconds' }, // no maximumAttempts: unlimited
});
// State changes are recorded as local activities: no round trip through the server's task queue per
// transition (measured: a 17-activity run took 902 ms with remote projection writes, 404 ms local).
const projection = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumInterval: '30 seconds' }, // unlimited, as for acts
});
/**
 * Versioning, the worked example: runs started before projection writes became local activities
 * have ScheduleActivityTask commands for them in their histories, so they must keep making the same
 * commands on replay. `patched` is true for runs that reach this point on the new code (it records a
 * marker) and false when replaying a history without the marker. Once no run started before the
 * change can still be open (longer than APPROVAL_TIMEOUT_SECONDS plus retention), the old branch
 * goes and `patched` becomes `deprecatePatch(PROJECTION_AS_LOCAL_ACTIVITY)`; a release later, that goes too.
 */
export const PROJECTION_AS_LOCAL_ACTIVITY = 'projection-as-local-activity';
/** Runs started on this code audit decisions from the workflow (every channel), not from the API. */
export const APPROVAL_AUDIT_IN_WORKFLOW = 'approval-audit-in-workflow';
/** Runs that reach their end on this code send completion notifications and end a failed run's execution Failed. */
export const NOTIFY_AND_FAIL_EXECUTION = 'notify-and-fail-execution';
/** The ApplicationFailure type a failed run's execution ends with, after compensation (the UI's Failures filter finds it). */
export const RUN_FAILED = 'RunFailed';

// Tools get a heartbeat timeout, so a worker that dies mid-call is noticed in seconds, not minutes.
const tools = proxyActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '5 seconds',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '10 seconds', maximumAttempts: 5 },
});

export async function agentRunWorkflow(run: AgentRunInput): Promise<RunStatus> {
  const { status, failureCode, notifications, failsExecution } = await conductRun(run);
  // Not cancellable: a cancelled run still delivers its notifications and closes its handlers.
  return CancellationScope.nonCancellable(async () => {
    await Promise.allSettled(notifications);
    // Handlers (an approval being audited) finish before the run closes.
    await condition(allHandlersFinished);
    if (status === 'failed' && failsExecution) {
      // Compensation is done and the projection says failed; the execution ends Failed so the Temporal
      // UI shows it so. Content-free: the failure code only.
      throw ApplicationFailure.create({ type: RUN_FAILED, message: `The run ended failed (${failureCode ?? 'run_failed'}).`, nonRetryable: true });
    }
    return status;
  });
}

/** The event of each way a run ends. */
const END_EVENT = { completed: 'complete', failed: 'fail', needs_attention: 'unresolved' } as const satisfies Record<string, RunEvent>;

interface RunEnd {
  status: RunStatus;
  failureCode: string | null;
  /** Notification deliveries in flight; awaited before the workflow closes. */
  notifications: Promise<unknown>[];
  /** A failed run ends its execution Failed (runs started before that change complete). */
  failsExecution: boolean;
}

async function conductRun(run: AgentRunInput): Promise<RunEnd> {
  const { runId, tenantId } = run;
  const notifications: Promise<unknown>[] = [];
  let failureCode: string | null = null;
  let pending: PendingEffect[] = [];
  let signals = 0;
  let seq = 0;
  let decision: ApprovalDecision | undefined;
  const live: RunLiveState = { status: 'accepted', step: 'estimate', currentPlanStep: null, approval: 'none', stepsDone: 0, stepsTotal: 0 };
  let approval: ApprovalRecord | null = null;

  // Decided once, at the start, so a run keeps one behaviour throughout (a patch marker written inside
  // an Update handler or between local activities does not replay reliably: tests/replay.test.ts).
  const auditsDecisions = patched(APPROVAL_AUDIT_IN_WORKFLOW);
  const notifies = patched(NOTIFY_AND_FAIL_EXECUTION);
  const awaitsDecision = () => live.status === 'awaiting_approval' && !decision;
  const showDetails = () => setCurrentDetails(currentDetailsOf(runId, live, pending, failureCode));

  /** Audits a decision (or a refused signal) through an activity, whatever channel it came by. */
  async function audit(action: string, channel: ApprovalChannel, keyId: string | null, eventKey: string, d: unknown) {
    if (!auditsDecisions) return; // runs started before: the API audited its own decisions
    const subject = d && typeof d === 'object' ? { decision: (d as ApprovalDecision).decision, reason: (d as ApprovalDecision).reason } : d;
    // A regular activity: a local activity's marker inside an Update handler does not replay (sdk-core
    // reports nondeterminism at the Update's completion event; tests/replay.test.ts caught it).
    await acts.recordApprovalAudit({ tenantId, runId, action, channel, keyId, eventKey: `run:${runId}:${eventKey}`, subject });
  }

  setHandler(stateQuery, () => live);
  setHandler(
    approvalUpdate,
    async (d, meta?: ApprovalMeta) => {
      decision = d;
      const channel: ApprovalChannel = meta?.channel === 'api' ? 'api' : 'temporal:update';
      await audit(`run.approval.${d.decision}`, channel, meta?.key_id ?? null, currentUpdateInfo()?.id ?? 'update', d);
      return { decision: d.decision, accepted: true };
    },
    {
      validator: (d: ApprovalDecision, _meta?: ApprovalMeta) => {
        if (live.status !== 'awaiting_approval' || decision) {
          throw ApplicationFailure.create({ type: NOT_AWAITING_APPROVAL, message: `run is ${live.status}, not awaiting approval`, nonRetryable: true });
        }
        if (d?.decision !== 'approve' && d?.decision !== 'reject') {
          throw ApplicationFailure.create({ type: 'InvalidDecision', message: 'decision must be approve or reject', nonRetryable: true });
        }
      },
    },
  );
  setHandler(approvalSignal, async (d) => {
    signals += 1;
    const eventKey = `signal:${signals}`;
    if (awaitsDecision() && (d?.decision === 'approve' || d?.decision === 'reject')) {
      decision = d;
      await audit(`run.approval.${d.decision}`, 'temporal:signal', null, eventKey, d);
      return;
    }
    // A signal cannot be refused to its sender; it is ignored, logged without content and audited.
    const why = awaitsDecision() ? 'decision must be approve or reject' : `run is ${live.status}, not awaiting approval`;
    log.warn('approval signal refused', { runId, why });
    await audit('run.approval.signal_refused', 'temporal:signal', null, eventKey, d);
  });

  /**
   * Every state change, by the one table of moves (domain/runs/states.ts): search attribute,
   * projection and a content-free journey event. A move the table does not have is a bug in this
   * code: it fails the workflow task (Temporal retries it, and a fixed worker resumes the run).
   */
  async function moveTo(event: RunEvent, step: RunStep, patch: RunProjectionPatch = {}, kind?: string) {
    const status = nextStatus(live.status, event);
    if (!status) throw new Error(`Illegal run move: no "${event}" from ${live.status} (domain/runs/states.ts RUN_TRANSITIONS).`);
    // A new state is run.<state>; a new step within the same state is run.step.<step>.
    const eventKind = kind ?? (status !== live.status || seq === 0 ? `run.${status}` : `run.step.${step}`);
    live.status = status;
    live.step = step;
    seq += 1;
    upsertSearchAttributes([{ key: RunStatusKey, value: status }]);
    if (patch.failure) failureCode = patch.failure.code;
    showDetails();
    const transition: RunTransition = { runId, tenantId, seq, status, step, patch, kind: eventKind, progress: progressOf(live) };
    if (patched(PROJECTION_AS_LOCAL_ACTIVITY)) await projection.recordTransition(transition);
    else await acts.recordTransition(transition);
  }

  /**
   * Notifies the endpoints subscribed to `event` through a child workflow (workflows/notify-run.ts)
   * that outlives the run, so hours of retries to a receiver that is down never hold the run open.
   * Runs without subscribers start no child. The child's start is awaited before the run closes.
   */
  function announce(event: NotificationEvent) {
    if (!notifies) return;
    notifications.push(
      (async () => {
        const endpointIds = await projection.notificationTargets({ tenantId, event });
        if (endpointIds.length === 0) return;
        await startChild(notifyRunWorkflow, {
          workflowId: `${runId}-notify-${event}`,
          args: [{ tenantId, runId, event, endpointIds }],
          parentClosePolicy: ParentClosePolicy.ABANDON,
          typedSearchAttributes: [{ key: TenantIdKey, value: tenantId }],
        });
      })(),
    );
  }

  async function end(status: 'completed' | 'failed' | 'needs_attention', patch: RunProjectionPatch): Promise<RunEnd> {
    await moveTo(END_EVENT[status], live.step, { ...patch, completed: true });
    announce(`run.${status}`);
    return { status, failureCode, notifications, failsExecution: notifies };
  }

  try {
    await moveTo('accept', 'estimate');
    await moveTo('begin', 'estimate');
    const model = run.model ?? 'svc-workspace';
    const estimate = await acts.estimateRun({ tenantId, input: run.input, memory: run.memory, model });
    // The provider is fixed here for the whole run; estimates of runs started before routing had none: local.
    const upstream: ModelContext | null = estimate.provider === 'upstream' ? { runId, tenantId, model, provider: 'upstream', input: run.input } : null;

    await moveTo('advance', 'reserve', { estimate });
    const hold = await acts.reserveCredits({ tenantId, runId, amount: estimate.amounts.total });
    if (hold.status === 'insufficient') {
      return await end('needs_attention', {
        failure: { code: 'insufficient_credits', message: `The estimate needs ${hold.required} credits; ${hold.available} are available. Nothing was held.` },
      });
    }
    if (hold.status === 'over_budget') {
      return await end('needs_attention', {
        failure: {
          code: 'budget_exceeded',
          message: `The estimate needs ${hold.required} credits; the tenant's budgets leave ${hold.headroom}. Nothing was held.`,
        },
      });
    }
    const reservation = { amount: hold.amount, status: 'held' as const };

    await moveTo('advance', 'plan', { reservation });
    let plan: Plan;
    if (upstream) {
      const planned = await planWithModel(upstream);
      if (planned.kind === 'stopped') {
        // The planning calls were made, so they are charged (never past the hold); the rest is released.
        const usage = await acts.settleRun({ runId, input: run.input, results: [], provider: 'upstream', model });
        return await end('needs_attention', {
          usage,
          reservation: { ...reservation, status: 'settled' },
          failure: { ...planned.stop, message: `${planned.stop.message} No step was run; only the model calls made were charged.` },
        });
      }
      plan = planned.plan;
    } else {
      plan = await acts.planRun({ input: run.input, memory: run.memory });
    }
    live.stepsTotal = plan.steps.length;

    const external = plan.steps.filter((s) => s.effect === 'external');
    if (external.length > 0) {
      const deadline = new Date(Date.now() + run.approvalTimeoutMs).toISOString();
      approval = {
        state: 'pending',
        effects: external.map((s) => ({ step_id: s.id, tool: s.tool, why: s.purpose })),
        reason: 'The plan has external effects; a person must approve them. Possession of a key never approves anything.',
        deadline,
        decided_at: null,
        decision_reason: null,
      };
      live.approval = 'pending';
      pending = external.map((s) => ({ step_id: s.id, tool: s.tool }));
      await moveTo('needs_approval', 'approval', { plan, approval });
      announce('run.awaiting_approval');
      const decided = await condition(() => decision !== undefined, run.approvalTimeoutMs);
      const decidedAt = new Date(Date.now()).toISOString();
      if (!decided) {
        approval = { ...approval, state: 'expired', decided_at: decidedAt };
        live.approval = 'expired';
        const closed = await acts.releaseCredits({ runId });
        return await end('needs_attention', {
          approval,
          reservation: { ...reservation, status: holdStatus(closed) },
          failure: { code: 'approval_expired', message: `No approval decision before ${deadline}; nothing external was done and the hold was released.` },
        });
      }
      if (decision!.decision === 'reject') {
        approval = { ...approval, state: 'rejected', decided_at: decidedAt, decision_reason: decision!.reason ?? null };
        live.approval = 'rejected';
        const closed = await acts.releaseCredits({ runId });
        return await end('failed', {
          approval,
          reservation: { ...reservation, status: holdStatus(closed) },
          failure: { code: 'approval_rejected', message: decision!.reason ? `Approval rejected: ${decision!.reason}` : 'Approval rejected.' },
        });
      }
      approval = { ...approval, state: 'approved', decided_at: decidedAt, decision_reason: decision!.reason ?? null };
      live.approval = 'approved';
      pending = [];
    }

    await moveTo('execute', 'execute', { plan, approval });
    /** Runs one step through its tool; a tool that kept failing is a failed step, not a failed run. */
    const runStep = async (step: PlanStep, previous: StepResult[]): Promise<StepResult> => {
      live.currentPlanStep = step.id;
      showDetails();
      let result: StepResult;
      try {
        result = await tools.runTool({ runId, tenantId, step, input: run.input, memory: run.memory, previous });
      } catch (err) {
        if (!(err instanceof ActivityFailure) || isCancellation(err)) throw err;
        // An external effect whose attempts may have reached the receiver (a worker that died mid-send,
        // a 5xx) is of unknown outcome unless the last attempt proved nothing was sent.
        const notSent = err.cause instanceof ApplicationFailure && err.cause.type === WEBHOOK_NOT_SENT;
        result =
          step.effect === 'external' && !notSent
            ? {
                step_id: step.id,
                tool: step.tool,
                status: 'outcome_unknown',
                detail: 'The delivery kept failing after retries; an attempt may have reached the receiver. Check with the receiver.',
                output: null,
                sources: [],
              }
            : { step_id: step.id, tool: step.tool, status: 'failed', detail: 'The tool kept failing after retries.', output: null, sources: [] };
      }
      live.stepsDone += 1;
      await moveTo('advance', 'execute', { stepResults: [...previous, result] }, 'run.step_finished');
      return result;
    };
    let loop: LoopResult;
    if (upstream) {
      const limits = { maxTurns: estimate.basis.max_turns ?? 1, maxToolCalls: estimate.basis.max_tool_calls ?? 0 };
      loop = await executeWithModel(upstream, plan, limits, runStep);
    } else {
      const results: StepResult[] = [];
      for (const step of plan.steps) results.push(await runStep(step, results));
      loop = { results, answer: null, stopped: null, refusals: [] };
    }
    const results = loop.results;
    live.currentPlanStep = null;

    await moveTo('verify', 'verify');
    const verified = await acts.verifyRun({
      runId,
      input: run.input,
      memory: run.memory,
      plan,
      results,
      approval,
      answer: loop.answer,
      stopped: loop.stopped,
      refusals: loop.refusals,
    });
    if (run.memory) await acts.rememberRun({ runId, tenantId, input: run.input, summary: verified.summary });

    await moveTo('advance', 'settle', { result: verified.result, receipt: verified.receipt });
    const usage = await acts.settleRun({ runId, input: run.input, results, provider: estimate.provider, model });
    return await end(verified.receipt.unresolved.length > 0 ? 'needs_attention' : 'completed', {
      usage,
      reservation: { ...reservation, status: 'settled' },
      failure: verified.receipt.unresolved.length > 0 ? remainderFailure(verified.receipt.unresolved.length, loop.stopped) : null,
    });
  } catch (err) {
    // Only business failures compensate. Anything else is a bug in this code: it fails the workflow
    // task, Temporal retries the task, and a fixed worker resumes the run where it was.
    if (!(err instanceof TemporalFailure)) throw err;
    // Its record already says how it ended (the failure came after, writing the end): nothing to compensate.
    if (isTerminal(live.status)) throw err;
    // Compensation: the hold is released and the run ends failed.
    const cancelled = isCancellation(err);
    const undecided = approval?.state === 'pending' ? { ...approval, state: 'cancelled' as const, decided_at: new Date(Date.now()).toISOString() } : approval;
    return await CancellationScope.nonCancellable(async () => {
      const closed = await acts.releaseCredits({ runId });
      return end('failed', {
        ...(undecided !== approval ? { approval: undecided } : {}),
        reservation: { status: holdStatus(closed) },
        failure: cancelled
          ? { code: 'cancelled', message: 'The run was cancelled; nothing further was done and the hold was released.' }
          : { code: 'run_failed', message: `The run stopped at step ${live.step}; the hold was released. Retry with a new run.` },
      });
    });
  }
}

/** Why a run with an unresolved remainder needs attention: the loop's stop reason when it stopped early. */
function remainderFailure(count: number, stopped: LoopStop | null) {
  const message = `${count} item(s) unresolved; see receipt.unresolved.`;
  return stopped ? { code: stopped.code, message: `${stopped.message} ${message}` } : { code: 'unresolved_remainder', message };
}

/** How compensation closed the hold: model calls an upstream run already made are charged (settled), else all is released. */
function holdStatus(closed: { charged: number } | undefined): 'settled' | 'released' {
  // Runs started before compensation reported its outcome replay with no result here.
  return closed && closed.charged > 0 ? 'settled' : 'released';
}
