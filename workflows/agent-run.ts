// One workflow per run: estimate, reserve, plan, approval, execute, verify, settle
// (workflows/run-phases.ts, one function each). Deterministic orchestration only; every
// side effect is an activity. The run's state and its moves: workflows/run-context.ts.
import { allHandlersFinished, ApplicationFailure, CancellationScope, condition, TemporalFailure } from '@temporalio/workflow';
import type { AgentRunInput } from '../domain/runs/run-input.ts';
import { isTerminal, type RunStatus } from '../domain/runs/states.ts';
import { openRun, type RunEnd } from './run-context.ts';
import { approvalPhase, compensate, estimatePhase, executePhase, isEnd, planPhase, reservePhase, settlePhase, verifyPhase } from './run-phases.ts';

export type { AgentRunInput } from '../domain/runs/run-input.ts';

/** The ApplicationFailure type a failed run's execution ends with, after compensation (the UI's Failures filter finds it). */
export const RUN_FAILED = 'RunFailed';

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

/** The paid flow, phase by phase; a phase that ends the run early returns how it ended. */
async function conductRun(run: AgentRunInput): Promise<RunEnd> {
  const c = openRun(run);
  try {
    const { estimate, model, upstream } = await estimatePhase(c);
    const reservation = await reservePhase(c, estimate);
    if (isEnd(reservation)) return reservation;
    const plan = await planPhase(c, reservation, upstream, model);
    if (isEnd(plan)) return plan;
    const refused = await approvalPhase(c, plan, reservation);
    if (refused) return refused;
    const loop = await executePhase(c, plan, upstream, estimate);
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
