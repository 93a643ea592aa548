// The activities a run's workflow calls, with their timeouts and retries.
import { type ActivityOptions, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { createActivities } from '../activities/index.ts';

type Activities = ReturnType<typeof createActivities>;

// Projection, ledger, estimate, plan, verify and memory activities are idempotent, so they retry for as
// long as a database outage lasts (no attempt limit), at most every 30 s. Compensation (releaseCredits)
// is one of them: it cannot give up either.
export const ACTIVITY_OPTIONS = {
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumInterval: '30 seconds' }, // no maximumAttempts: unlimited
} as const satisfies ActivityOptions;
export const acts = proxyActivities<Activities>(ACTIVITY_OPTIONS);

// State changes are recorded as local activities: no round trip through the server's task queue per
// transition (measured: a 17-activity run took 902 ms with remote projection writes, 404 ms local).
export const projection = proxyLocalActivities<Activities>(ACTIVITY_OPTIONS); // unlimited, as for acts

// Tools get a heartbeat timeout, so a worker that dies mid-call is noticed in seconds, not minutes.
export const TOOL_OPTIONS = {
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '5 seconds',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '10 seconds', maximumAttempts: 5 },
} as const satisfies ActivityOptions;
export const tools = proxyActivities<Activities>(TOOL_OPTIONS);
