// The phases of a run's paid flow, one function each: estimate, reserve, plan, approval,
// execute, verify, settle, and the compensation when a phase fails. A phase that ends the run
// early returns its RunEnd; workflows/agent-run.ts runs them in order.
import { ActivityFailure, allHandlersFinished, ApplicationFailure, CancellationScope, condition, isCancellation } from '@temporalio/workflow';
import type { NumberedPart } from '../activities/embedded/answer-part.ts';
import type { ModelId } from '../domain/models.ts';
import type { Plan, PlanStep } from '../domain/planning/plan.ts';
import type { ApprovalEffect, ApprovalRecord, LoopStop, StepResult } from '../domain/runs/run-types.ts';
import { policyFor } from '../domain/runs/approval-policy.ts';
import { approvalsStillNeeded } from '../domain/runs/approval-votes.ts';
import type { AgentRunInput } from '../domain/runs/run-input.ts';
import {
  executeByPlan,
  executeWithModel,
  type LoopResult,
  type ModelContext,
  type Prepared,
  planWithModel,
  prepareByPlan,
  type RunPlannedStep,
} from './agent-loop.ts';
import { TOOL_NOT_SENT, WEBHOOK_NOT_SENT } from './messages.ts';
import { acts, tools } from './run-activities.ts';
import type { RunContext, RunEnd } from './run-context.ts';
import { type Estimate, newerBuildIsTarget, type Reservation } from './run-resume.ts';

type Verified = Awaited<ReturnType<typeof acts.verifyRun>>;

/** Whether a phase ended the run (rather than handing on its result). */
export function isEnd(value: unknown): value is RunEnd {
  return typeof value === 'object' && value !== null && 'failsExecution' in value;
}

/** Estimate: the run is recorded as started, priced, and its provider fixed for the whole run. */
export async function estimatePhase(c: RunContext): Promise<{ estimate: Estimate; model: ModelId; upstream: ModelContext | null }> {
  const { tenantId, input, memory } = c.run;
  await c.moveTo('accept', 'estimate');
  await c.moveTo('begin', 'estimate');
  const model: ModelId = c.run.model ?? 'svc-workspace';
  const estimate = await acts.estimateRun({ tenantId, input, memory, model });
  return { estimate, model, upstream: modelContextOf(c, estimate, model) };
}

/**
 * The provider is fixed at the estimate for the whole run; estimates of runs started before routing had
 * none: local. A model's provider (upstream or embedded) plans and acts through the agent loop.
 */
export function modelContextOf(c: RunContext, estimate: Estimate, model: ModelId): ModelContext | null {
  const { runId, tenantId, input, memory } = c.run;
  const provider = estimate.provider;
  return provider === 'upstream' || provider === 'embedded' ? { runId, tenantId, model, provider, input, memory } : null;
}

/** Reserve: hold the estimate, or end needs_attention when the balance or a budget cannot cover it. */
export async function reservePhase(c: RunContext, estimate: Estimate): Promise<Reservation | RunEnd> {
  await c.moveTo('advance', 'reserve', { estimate });
  const hold = await acts.reserveCredits({ tenantId: c.run.tenantId, runId: c.run.runId, amount: estimate.amounts.total });
  if (hold.status === 'insufficient') {
    return await c.end('needs_attention', {
      failure: { code: 'insufficient_credits', message: `The estimate needs ${hold.required} credits; ${hold.available} are available. Nothing was held.` },
    });
  }
  if (hold.status === 'over_budget') {
    return await c.end('needs_attention', {
      failure: {
        code: 'budget_exceeded',
        message: `The estimate needs ${hold.required} credits; the tenant's budgets leave ${hold.headroom}. Nothing was held.`,
      },
    });
  }
  return { amount: hold.amount, status: 'held' as const };
}

/** Plan: by the model (checked, replanned once) or the local planner. */
export async function planPhase(c: RunContext, reservation: Reservation, upstream: ModelContext | null, model: ModelId): Promise<Plan | RunEnd> {
  await c.moveTo('advance', 'plan', { reservation });
  let plan: Plan;
  if (upstream) {
    const planned = await planWithModel(upstream);
    if (planned.kind === 'stopped') {
      // The planning calls were made, so they are charged (never past the hold); the rest is released.
      const usage = await acts.settleRun({ runId: c.run.runId, input: c.run.input, results: [], provider: upstream.provider, model });
      return await c.end('needs_attention', {
        usage,
        reservation: { ...reservation, status: 'settled' },
        failure: { ...planned.stop, message: `${planned.stop.message} No step was run; only the model calls made were charged.` },
      });
    }
    plan = planned.plan;
  } else {
    plan = await acts.planRun({ input: c.run.input, memory: c.run.memory });
  }
  c.live.stepsTotal = plan.steps.length;
  return plan;
}

/**
 * Prepare: for a plan the service runs step by step whose delivery sends an earlier action's result,
 * the reads and the model's answers run before the approval wait (nothing external happens in them),
 * so the person approves the very message that will be sent. Null when there is nothing to prepare.
 */
export async function preparePhase(c: RunContext, plan: Plan, upstream: ModelContext | null): Promise<{ plan: Plan; prepared: Prepared } | null> {
  const sendsResult = plan.steps.some((s) => s.effect === 'external' && s.message_from !== undefined);
  if (!upstream || plan.execution !== 'steps' || !sendsResult) return null;
  const runStep: RunPlannedStep = async (step, previous) => {
    const result = await runStepShown(c, step, previous, plan.actions);
    await c.moveTo('advance', 'plan', { stepResults: [...previous, result] }, 'run.step_finished');
    return result;
  };
  const prepared = await prepareByPlan(upstream, plan, runStep);
  c.live.currentPlanStep = null;
  const answered = await acts.answeredDeliveries({ plan, parts: prepared.parts });
  c.live.stepsTotal = answered.steps.length;
  return { plan: answered, prepared };
}

/** One step through its tool, shown as the current step while it runs and counted when it is done. */
async function runStepShown(c: RunContext, step: PlanStep, previous: StepResult[], actions: Plan['actions'], answers?: NumberedPart[]): Promise<StepResult> {
  c.live.currentPlanStep = step.id;
  c.showDetails();
  const result = await runTool(c, step, previous, answers, actions);
  c.live.stepsDone += 1;
  return result;
}

/**
 * Approval: a plan with external effects waits for a person's decision, until the deadline.
 * Returns null when the run may go on (approved, or nothing to approve), how it ended, or UPGRADE.
 */
export async function approvalPhase(c: RunContext, plan: Plan, reservation: Reservation): Promise<RunEnd | typeof UPGRADE | null> {
  const external = plan.steps.filter((s) => s.effect === 'external');
  if (external.length === 0) return null;
  const { approvalTimeoutMs } = c.run;
  const deadline = new Date(Date.now() + approvalTimeoutMs).toISOString();
  const approval: ApprovalRecord = {
    state: 'pending',
    effects: external.map((s) => withPolicy(effectToApprove(s, plan), c.run.approvalPolicies)),
    reason: 'The plan has external effects; a person must approve them. Possession of a key never approves anything.',
    deadline,
    decided_at: null,
    decision_reason: null,
  };
  c.approval = withNeeded(approval);
  c.live.approval = 'pending';
  c.pending = external.map((s) => ({ step_id: s.id, tool: s.tool }));
  await c.moveTo('needs_approval', 'approval', { plan, approval: c.approval });
  c.announce('run.awaiting_approval');
  return await awaitApproval(c, plan, reservation, approvalTimeoutMs);
}

/**
 * Waits up to `waitMs` for a decision on `c.approval`. A deploy's nudge that finds a newer target build
 * ends the wait with UPGRADE, once no handler is mid-decision and the notifications have started; a
 * decision taken while the handlers finished is applied here, on this build.
 */
export async function decisionOrUpgrade(c: RunContext, waitMs: number): Promise<'decided' | 'expired' | typeof UPGRADE> {
  const woken = await condition(() => c.decision() !== undefined || newerBuildIsTarget(), waitMs);
  if (woken && c.decision() === undefined) {
    await Promise.allSettled(c.notifications);
    await condition(allHandlersFinished);
    if (c.decision() === undefined) return UPGRADE;
  }
  return woken ? 'decided' : 'expired';
}

/** The approval wait ended because a newer build is this run's target: it continues as new there (workflows/run-resume.ts). */
export const UPGRADE = 'upgrade' as const;

/**
 * The wait for the decision on `c.approval` (asked for by approvalPhase, in this execution or the one
 * this continued from), until its deadline. A deploy's nudge that finds a newer target build ends the
 * wait with UPGRADE, once no handler is mid-decision and the notification has started.
 */
export async function awaitApproval(c: RunContext, plan: Plan, reservation: Reservation, waitMs: number): Promise<RunEnd | typeof UPGRADE | null> {
  const { runId } = c.run;
  const waited = await decisionOrUpgrade(c, waitMs);
  if (waited === UPGRADE) return UPGRADE;
  // As the handlers left it: the decisions taken, and whose approvals count on each effect.
  let approval = c.approval!;
  const woken = waited === 'decided';
  const decidedAt = new Date(Date.now()).toISOString();
  if (!woken) {
    c.approval = { ...approval, state: 'expired', decided_at: decidedAt };
    c.live.approval = 'expired';
    const closed = await acts.releaseCredits({ runId });
    return await c.end('needs_attention', {
      approval: c.approval,
      reservation: { ...reservation, status: holdStatus(closed) },
      failure: {
        code: 'approval_expired',
        message: `No approval decision before ${approval.deadline}; nothing external was done and the hold was released.`,
      },
    });
  }
  // Decided by several decisions over time: every handler's counted write lands before the run moves on
  // (runs decided by one decision go on at once, as they always did).
  if ((approval.approvals?.length ?? 0) > 1) {
    await condition(allHandlersFinished);
    approval = c.approval!;
  }
  const decision = c.decision()!;
  if (decision.decision === 'reject') {
    c.approval = { ...approval, state: 'rejected', decided_at: decidedAt, decision_reason: decision.reason ?? null };
    c.live.approval = 'rejected';
    const closed = await acts.releaseCredits({ runId });
    return await c.end('failed', {
      approval: c.approval,
      reservation: { ...reservation, status: holdStatus(closed) },
      failure: { code: 'approval_rejected', message: decision.reason ? `Approval rejected: ${decision.reason}` : 'Approval rejected.' },
    });
  }
  // Edited arguments (checked by the API against the tool's schema) replace the proposed ones; both digests are kept.
  for (const edit of decision.edits ?? []) {
    const i = plan.steps.findIndex((s) => s.id === edit.step_id && s.effect === 'external');
    if (i < 0) continue;
    const step = plan.steps[i]!;
    // An edited message is what is sent: it replaces the earlier action's result the step was to send.
    const { message_from: _, ...own } = step;
    const base = typeof edit.arguments.message === 'string' ? own : step;
    plan.steps[i] = { ...base, arguments: edit.arguments, args_digest: edit.args_digest, proposed_digest: step.args_digest };
  }
  const external = plan.steps.filter((s) => s.effect === 'external');
  const effects = decision.edits?.length
    ? withApprovers(
        external.map((s) => effectToApprove(s, plan)),
        approval.effects,
      )
    : approval.effects;
  c.approval = { ...approval, effects, state: 'approved', decided_at: decidedAt, decision_reason: decision.reason ?? null };
  c.live.approval = 'approved';
  c.pending = [];
  return null;
}

/** The record saying how many approvals it needs, when its policy asks more than one (records without a policy stay as they were). */
export function withNeeded(record: ApprovalRecord): ApprovalRecord {
  const needed = approvalsStillNeeded(record);
  return needed > 1 ? { ...record, approvals_needed: needed } : record;
}

/** The effects as approved, each with the policy and the approvers the round's votes gave it. */
export function withApprovers(effects: ApprovalEffect[], voted: ApprovalEffect[]): ApprovalEffect[] {
  const byStep = new Map(voted.map((e) => [e.step_id, e]));
  return effects.map((e) => {
    const v = byStep.get(e.step_id);
    if (!v) return e;
    const { required, allowed_approvers, approved_by } = v;
    return {
      ...e,
      ...(required !== undefined ? { required } : {}),
      ...(allowed_approvers ? { allowed_approvers } : {}),
      ...(approved_by ? { approved_by } : {}),
    };
  });
}

/** The effect with what its tool's approval policy asks, when that is more than one approval by anyone (runs without policies stay as they were). */
export function withPolicy(effect: ApprovalEffect, policies: AgentRunInput['approvalPolicies']): ApprovalEffect {
  const { required, allowed_approvers } = policyFor(policies, effect.tool);
  if (required === 1 && !allowed_approvers) return effect;
  return { ...effect, required, ...(allowed_approvers ? { allowed_approvers } : {}) };
}

/** What a person approves for an external step; a server tool's shows the exact call: server, tool, arguments and digest. */
export function effectToApprove(s: PlanStep, plan: Plan): ApprovalEffect {
  const ref = plan.serverTools?.[s.tool];
  const source = s.message_from === undefined ? undefined : plan.actions?.[s.message_from - 1];
  return {
    step_id: s.id,
    tool: s.tool,
    why: s.purpose,
    ...(ref ? { server: ref.server, server_tool: ref.tool } : {}),
    ...(s.message_from !== undefined ? { message_from: { action: s.message_from, request: source?.clause ?? '' } } : {}),
    arguments: s.arguments ?? {},
    ...(s.args_digest ? { args_digest: s.args_digest } : {}),
    ...(s.proposed_digest ? { proposed_digest: s.proposed_digest } : {}),
  };
}

/** Execute: every step through its tool (the model's loop, or the plan in order); a step that kept failing is a failed step, not a failed run. */
export async function executePhase(
  c: RunContext,
  plan: Plan,
  upstream: ModelContext | null,
  estimate: Estimate,
  prepared?: Prepared | null,
): Promise<LoopResult> {
  await c.moveTo('execute', 'execute', { plan, approval: c.approval });
  const runStep: RunPlannedStep = async (step, previous, answers) => {
    const result = await runStepShown(c, step, previous, plan.actions, answers);
    await c.moveTo('advance', 'execute', { stepResults: [...previous, result] }, 'run.step_finished');
    return result;
  };
  let loop: LoopResult;
  if (upstream && plan.execution === 'steps') {
    loop = await executeByPlan(upstream, plan, runStep, prepared ?? undefined);
  } else if (upstream) {
    const limits = { maxTurns: estimate.basis.max_turns ?? 1, maxToolCalls: estimate.basis.max_tool_calls ?? 0 };
    loop = await executeWithModel(upstream, plan, limits, runStep);
  } else {
    const results: StepResult[] = [];
    for (const step of plan.steps) results.push(await runStep(step, results));
    loop = { results, answer: null, stopped: null, refusals: [] };
  }
  c.live.currentPlanStep = null;
  return loop;
}

/** One step through its tool; retries exhausted make a failed step, or one of unknown outcome for an effect that may have been sent. */
export async function runTool(
  c: RunContext,
  step: PlanStep,
  previous: StepResult[],
  answers?: NumberedPart[],
  actions?: Plan['actions'],
  protocol?: 'tool_calls',
): Promise<StepResult> {
  const { runId, tenantId, input, memory } = c.run;
  try {
    return await tools.runTool({
      runId,
      tenantId,
      step,
      input,
      memory,
      previous,
      ...(answers?.length ? { answers } : {}),
      ...(actions ? { actions } : {}),
      ...(protocol ? { protocol } : {}),
    });
  } catch (err) {
    if (!(err instanceof ActivityFailure) || isCancellation(err)) throw err;
    // An external effect whose attempts may have reached the receiver (a worker that died mid-send,
    // a 5xx) is of unknown outcome unless the last attempt proved nothing was sent.
    const notSent = err.cause instanceof ApplicationFailure && (err.cause.type === WEBHOOK_NOT_SENT || err.cause.type === TOOL_NOT_SENT);
    if (step.effect !== 'external' || notSent) {
      const detail = notSent ? 'Every attempt failed before anything was sent; nothing was done.' : 'The tool kept failing after retries.';
      return { step_id: step.id, tool: step.tool, status: 'failed', detail, output: null, sources: [] };
    }
    return {
      step_id: step.id,
      tool: step.tool,
      status: 'outcome_unknown',
      detail: 'The call kept failing after retries; an attempt may have reached its receiver. Check with the receiver.',
      output: null,
      sources: [],
    };
  }
}

/** Verify: the receipt is computed from what was done, never asserted; a memory run remembers its outcome line. */
export async function verifyPhase(c: RunContext, plan: Plan, loop: LoopResult): Promise<Verified> {
  const { runId, tenantId, input, memory } = c.run;
  await c.moveTo('verify', 'verify');
  const verified = await acts.verifyRun({
    runId,
    input,
    memory,
    plan,
    results: loop.results,
    approval: c.approval,
    answer: loop.answer,
    stopped: loop.stopped,
    refusals: loop.refusals,
  });
  if (memory) await acts.rememberRun({ runId, tenantId, input, summary: verified.summary });
  return verified;
}

/** Settle: charge the usage (never past the hold), release the rest, and end completed or needs_attention. */
export async function settlePhase(
  c: RunContext,
  verified: Verified,
  loop: LoopResult,
  reservation: Reservation,
  estimate: Estimate,
  model: ModelId,
): Promise<RunEnd> {
  await c.moveTo('advance', 'settle', { result: verified.result, receipt: verified.receipt });
  const usage = await acts.settleRun({ runId: c.run.runId, input: c.run.input, results: loop.results, provider: estimate.provider, model });
  const unresolved = verified.receipt.unresolved.length;
  return await c.end(unresolved > 0 ? 'needs_attention' : 'completed', {
    usage,
    reservation: { ...reservation, status: 'settled' },
    failure: unresolved > 0 ? remainderFailure(unresolved, loop.stopped) : null,
  });
}

/** Compensation for a business failure (an activity that gave up, a cancellation): the hold is released and the run ends failed. */
export async function compensate(c: RunContext, err: unknown): Promise<RunEnd> {
  const cancelled = isCancellation(err);
  const { approval } = c;
  const undecided = approval?.state === 'pending' ? { ...approval, state: 'cancelled' as const, decided_at: new Date(Date.now()).toISOString() } : approval;
  return await CancellationScope.nonCancellable(async () => {
    const closed = await acts.releaseCredits({ runId: c.run.runId });
    return c.end('failed', {
      ...(undecided !== approval ? { approval: undecided } : {}),
      reservation: { status: holdStatus(closed) },
      failure: cancelled
        ? { code: 'cancelled', message: cancelledMessage(c.live.currentPlanStep) }
        : { code: 'run_failed', message: `The run stopped at step ${c.live.step}; the hold was released. Retry with a new run.` },
    });
  });
}

/** A cancellation that interrupted a step cannot say that step did nothing: its call may have reached its receiver. */
function cancelledMessage(runningStep: string | null): string {
  if (runningStep === null) return 'The run was cancelled; nothing further was done and the hold was released.';
  return `The run was cancelled while ${runningStep} was running: that step may or may not have taken effect; nothing after it was done and the hold was released.`;
}

/** Why a run with an unresolved remainder needs attention: the loop's stop reason when it stopped early. */
function remainderFailure(count: number, stopped: LoopStop | null) {
  const message = `${count} item(s) unresolved; see receipt.unresolved.`;
  return stopped ? { code: stopped.code, message: `${stopped.message} ${message}` } : { code: 'unresolved_remainder', message };
}

/** How compensation closed the hold: model calls an upstream run already made are charged (settled), else all is released. */
export function holdStatus(closed: { charged: number } | undefined): 'settled' | 'released' {
  // Runs started before compensation reported its outcome replay with no result here.
  return closed && closed.charged > 0 ? 'settled' : 'released';
}
