// One workflow per run: estimate, reserve, plan, approval, execute, verify, settle
// (workflows/run-phases.ts, one function each). Deterministic orchestration only; every
// side effect is an activity. The run's state and its moves: workflows/run-context.ts.
import {
  allHandlersFinished,
  ApplicationFailure,
  CancellationScope,
  condition,
  setWorkflowOptions,
  TemporalFailure,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { AgentRunInput } from '../domain/runs/run-input.ts';
import { RunStatusKey } from '../domain/runs/search-attributes.ts';
import { isTerminal, type RunStatus } from '../domain/runs/states.ts';
import { openRun, type RunContext, type RunEnd } from './run-context.ts';
import {
  approvalPhase,
  awaitApproval,
  compensate,
  estimatePhase,
  executePhase,
  isEnd,
  modelContextOf,
  planPhase,
  preparePhase,
  reservePhase,
  settlePhase,
  UPGRADE,
  verifyPhase,
} from './run-phases.ts';
import { type ApprovalWait, continueOnTargetBuild } from './run-resume.ts';
import { toolCallingRun } from './tool-calling.ts';
import { versioned } from './versioning.ts';

export type { AgentRunInput } from '../domain/runs/run-input.ts';

/** The ApplicationFailure type a failed run's execution ends with, after compensation (the UI's Failures filter finds it). */
export const RUN_FAILED = 'RunFailed';

export async function agentRunWorkflow(run: AgentRunInput): Promise<RunStatus> {
  const ended = await conductRun(run);
  if ('continueWith' in ended) return await continueOnTargetBuild(run, ended.continueWith);
  const { status, failureCode, notifications, failsExecution } = ended;
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

/**
 * Its executions are pinned to the build they started on: a deploy never replays a run on code it did not
 * start with. A run awaiting approval moves to a newer build by continue-as-new (workflows/run-resume.ts).
 */
setWorkflowOptions(versioned('PINNED'), agentRunWorkflow);

/**
 * The paid flow, phase by phase; a phase that ends the run early returns how it ended. An execution
 * that continued as new at its approval wait (run.resume) starts at that wait.
 */
async function conductRun(run: AgentRunInput): Promise<RunEnd | { continueWith: ApprovalWait }> {
  const wait = run.resume as ApprovalWait | undefined;
  const c = openRun(run, wait && { ...wait, stepsTotal: wait.plan.steps.length });
  try {
    let estimate: ApprovalWait['estimate'];
    let model: ApprovalWait['model'];
    let reservation: ApprovalWait['reservation'];
    let plan: ApprovalWait['plan'];
    let prepared: ApprovalWait['prepared'] | null = null;
    let decided: Awaited<ReturnType<typeof approvalPhase>>;
    if (wait?.toolLoop) {
      showResumed(c);
      return await toolCallingRun(c, wait.reservation, wait.estimate, wait.model, modelContextOf(c, wait.estimate, wait.model)!, wait);
    }
    if (wait) {
      ({ estimate, model, reservation, plan } = wait);
      prepared = wait.prepared ?? null;
      showResumed(c);
      // The same deadline as before the move; one already past expires at once (a timer needs a positive duration).
      decided = await awaitApproval(c, plan, reservation, Math.max(1, Date.parse(wait.approval.deadline) - Date.now()));
    } else {
      ({ estimate, model } = await estimatePhase(c));
      const held = await reservePhase(c, estimate);
      if (isEnd(held)) return held;
      reservation = held;
      const upstream = modelContextOf(c, estimate, model);
      // The estimate (recorded in the history, so replays decide alike) says whether the model plans with tool calls.
      if (estimate.protocol === 'tool_calls' && upstream) return await toolCallingRun(c, reservation, estimate, model, upstream);
      const planned = await planPhase(c, reservation, upstream, model);
      if (isEnd(planned)) return planned;
      plan = planned;
      // A delivery of a result is written before the wait, so the approval shows the very message.
      const ready = await preparePhase(c, plan, modelContextOf(c, estimate, model));
      if (ready) ({ plan, prepared } = ready);
      // Answers that stopped early leave nothing to send: no approval is asked, nothing external runs.
      decided = prepared?.stopped ? null : await approvalPhase(c, plan, reservation);
    }
    if (decided === UPGRADE) {
      const carried = { estimate, model, reservation, plan, approval: c.approval!, pending: c.pending, ...c.counters() };
      return { continueWith: prepared ? { ...carried, prepared } : carried };
    }
    if (decided) return decided;
    const upstream = modelContextOf(c, estimate, model);
    const loop = await executePhase(c, plan, upstream, estimate, prepared);
    const verified = await verifyPhase(c, plan, loop);
    return await settlePhase(c, verified, loop, reservation, estimate, model);
  } catch (err) {
    // Only business failures compensate. Anything else is a bug in this code: it fails the workflow
    // task, Temporal retries the task, and a fixed worker resumes the run where it was.
    if (!(err instanceof TemporalFailure)) throw err;
    // Its record already says how it ended (the failure came after, writing the end): nothing to compensate.
    if (isTerminal(c.live.status)) throw err;
    return await compensate(c, err);
  }
}

/** A continued execution shows where it is at once: the UI's details and the status search attribute. */
function showResumed(c: RunContext): void {
  upsertSearchAttributes([{ key: RunStatusKey, value: c.live.status }]);
  c.showDetails();
}
