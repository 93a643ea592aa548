import { proxyActivities, setWorkflowOptions } from '@temporalio/workflow';
import type * as activities from '../activities/index.ts';
import { versioned } from './versioning.ts';

const { noop } = proxyActivities<ReturnType<typeof activities.createActivities>>({
  startToCloseTimeout: '10 seconds',
});

/**
 * A trivial workflow that runs `count` no-op activities. It proves the worker
 * is live end to end and is the baseline the benchmark compares runs against.
 */
export async function probeWorkflow(count = 0): Promise<number> {
  for (let i = 0; i < count; i++) await noop();
  return count;
}

/** Seconds long: it ends on the build it started on. */
setWorkflowOptions(versioned('PINNED'), probeWorkflow);
