// Run by the journey retention Schedule (runtime/schedules.ts) every hour:
// deletes every tenant's journey events past JOURNEY_RETENTION_DAYS (activities/journey.ts).
import { proxyActivities, setWorkflowOptions } from '@temporalio/workflow';
import type { createActivities } from '../activities/index.ts';
import type { JourneyRetentionOutcome } from '../activities/journey.ts';
import { versioned } from './versioning.ts';

const { purgeExpiredJourneyEvents } = proxyActivities<ReturnType<typeof createActivities>>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute', maximumAttempts: 5 },
});

export async function purgeJourneyEventsWorkflow(): Promise<JourneyRetentionOutcome> {
  return purgeExpiredJourneyEvents();
}

/** Minutes long: it ends on the build it started on, which then drains quickly. */
setWorkflowOptions(versioned('PINNED'), purgeJourneyEventsWorkflow);
