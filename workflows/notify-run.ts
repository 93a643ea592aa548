// Delivers one run notification (run.awaiting_approval, run.completed, …) to the
// endpoints subscribed to it. A child of the run's workflow, abandoned when the
// run closes: a receiver that stays down for hours is retried here (same
// webhook-id each time) without holding the run's execution open.
import { proxyActivities, setWorkflowOptions } from '@temporalio/workflow';
import type { createActivities } from '../activities/index.ts';
import { NOTIFICATION_RETRY } from '../domain/notifications.ts';
import type { NotificationEvent } from '../domain/runs/progress.ts';
import { versioned } from './versioning.ts';

type Activities = ReturnType<typeof createActivities>;

const notify = proxyActivities<Activities>({ startToCloseTimeout: '30 seconds', retry: NOTIFICATION_RETRY });

export interface NotifyRunInput {
  tenantId: string;
  runId: string;
  event: NotificationEvent;
  endpointIds: string[];
  /** A tool-calling run's approval round (absent: the first). */
  round?: number;
}

/** Returns how many endpoints took the notification (2xx); the rest are recorded failed by the activity. */
export async function notifyRunWorkflow(input: NotifyRunInput): Promise<number> {
  const outcomes = await Promise.allSettled(
    input.endpointIds.map((endpointId) =>
      notify.deliverNotification({
        tenantId: input.tenantId,
        runId: input.runId,
        endpointId,
        event: input.event,
        ...(input.round ? { round: input.round } : {}),
      }),
    ),
  );
  return outcomes.filter((o) => o.status === 'fulfilled').length;
}

/** One activity retried for up to hours: it moves to the newest build rather than holding an old one's workers that long. Its command sequence (one activity per endpoint) is the compatibility it keeps; tests/replay.test.ts replays recorded histories on every change. */
setWorkflowOptions(versioned('AUTO_UPGRADE'), notifyRunWorkflow);
