// The rollout drill's waiting group after a promote (`--waiting N`): when every run that waited at its
// approval is on the new build, and, once they ended, which moved, which were left behind, which doubled.
//
// How a waiting run moves (workflows/run-resume.ts): its execution is PINNED to the build it started on;
// the promote's nudge wakes it, it sees its target build changed and continues as new, and the next
// execution's first workflow task runs on the new build (AUTO_UPGRADE for that task), which pins it there.
import type { Connection } from '@temporalio/client';
import { AGENT_RUN_WORKFLOW } from '../../domain/runs/run-input.ts';
import { onBuild } from '../../services/upgrade-nudge.ts';
import { sleep } from './cluster.ts';

export interface BuildTarget {
  connection: Connection;
  namespace: string;
  deploymentName: string;
}

const POLL_MS = 1_000;

/**
 * Of `runIds`, the runs on `buildId`: their open execution's TemporalWorkerDeploymentVersion (visibility)
 * is `<deployment>:<buildId>`. The server sets it when a worker of that build completes one of the
 * execution's workflow tasks, and for a PINNED run it is the build the run is pinned to. The waiting
 * runs all started on the old build, so an open execution on the new one is the one they continued into.
 */
export async function runsOnBuild(t: BuildTarget, buildId: string, runIds: ReadonlySet<string>): Promise<Set<string>> {
  const query = `WorkflowType = '${AGENT_RUN_WORKFLOW}' AND ExecutionStatus = 'Running' AND ${onBuild(t.deploymentName, buildId)}`;
  const on = new Set<string>();
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await t.connection.workflowService.listWorkflowExecutions({
      namespace: t.namespace,
      query,
      pageSize: 1_000,
      ...(nextPageToken ? { nextPageToken } : {}),
    });
    for (const e of page.executions ?? []) {
      const id = e.execution?.workflowId ?? '';
      if (runIds.has(id)) on.add(id);
    }
    nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
  } while (nextPageToken);
  return on;
}

export interface MoveTiming {
  /** Runs seen on the new build before the time ran out. */
  moved: Set<string>;
  /** From `since` until the last of them was seen there (to within POLL_MS); null when some never were. */
  allMovedMs: number | null;
}

/** Polls until every run of `runIds` is on `buildId`, or `timeoutMs` passes; the time is counted from `since` (the promote call). */
export async function untilAllOnBuild(t: BuildTarget, buildId: string, runIds: ReadonlySet<string>, since: number, timeoutMs: number): Promise<MoveTiming> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    // Visibility may lag or the frontend be busy: a failed poll is only a missed poll.
    const moved = await runsOnBuild(t, buildId, runIds).catch(() => new Set<string>());
    if (moved.size === runIds.size) return { moved, allMovedMs: Date.now() - since };
    if (Date.now() >= deadline) return { moved, allMovedMs: null };
    await sleep(POLL_MS);
  }
}

export interface WaitingVerdict {
  moved: string[];
  leftBehind: string[];
  doubled: string[];
}

/**
 * Once every run ended, from each waiting run's executions (oldest first, the build each ran on, from the
 * server) and the receiver's counts:
 * - moved: exactly two executions, the first on `v1`, the second on `v2`, and seen on `v2` in time;
 * - left behind: not seen on `v2` in time, or its last execution is not on `v2`;
 * - doubled: more than one execution on `v2` or more than two in all (it continued twice), or one of its
 *   tool deliveries received more than once.
 */
export function waitingVerdict(input: {
  waiting: readonly string[];
  chains: ReadonlyMap<string, readonly { buildId: string }[]>;
  movedInTime: ReadonlySet<string>;
  deliveries: ReadonlyMap<string, number>;
  v1: string;
  v2: string;
}): WaitingVerdict {
  const delivered = mostDeliveriesPerRun(input.deliveries);
  const verdict: WaitingVerdict = { moved: [], leftBehind: [], doubled: [] };
  for (const runId of input.waiting) {
    const builds = (input.chains.get(runId) ?? []).map((e) => e.buildId);
    const onV2 = builds.filter((b) => b === input.v2).length;
    if (!input.movedInTime.has(runId) || builds.at(-1) !== input.v2) verdict.leftBehind.push(runId);
    else if (builds.length === 2 && builds[0] === input.v1) verdict.moved.push(runId);
    if (onV2 > 1 || builds.length > 2 || (delivered.get(runId) ?? 0) > 1) verdict.doubled.push(runId);
  }
  return verdict;
}

/** The receiver counts deliveries per `<run_id>:<step_id>`; the most any one step of a run was received. */
function mostDeliveriesPerRun(deliveries: ReadonlyMap<string, number>): Map<string, number> {
  const most = new Map<string, number>();
  for (const [key, count] of deliveries) {
    const runId = key.slice(0, key.indexOf(':')); // run ids have no colon
    most.set(runId, Math.max(most.get(runId) ?? 0, count));
  }
  return most;
}
