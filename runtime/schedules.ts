// This service's Temporal Schedules, each one workflow on the worker's task queue
// at a fixed interval, overlaps skipped. The worker (and `npm start`) creates them
// at start-up if absent and updates their interval when the configuration changed;
// a failure is logged, not fatal: the next start tries again. Temporal being
// unreachable is thrown instead, for start-up to wait it out (runtime/startup.ts).
//   - reconcile: starts or ends runs whose workflow never started (activities/reconcile.ts);
//   - journey retention: deletes every tenant's journey events older than
//     JOURNEY_RETENTION_DAYS (activities/journey.ts), chat-only tenants included; the one
//     place events are purged.
import { type Client, ScheduleAlreadyRunning } from '@temporalio/client';
import type { Logger } from 'pino';
import { isDependencyOutage } from '../services/dependency-outage.ts';

export const reconcileScheduleId = (taskQueue: string) => `gws-reconcile-runs-${taskQueue}`;
export const journeyRetentionScheduleId = (taskQueue: string) => `gws-journey-retention-${taskQueue}`;
/** Hourly: events outlive the retention window by at most an hour. */
export const JOURNEY_RETENTION_INTERVAL_SECONDS = 3_600;

interface ScheduleSpec {
  scheduleId: string;
  workflowType: string;
  taskQueue: string;
  intervalSeconds: number;
  /** What is not done while the schedule is missing, for the warning. */
  withoutIt: string;
}

async function ensureSchedule(client: Client, s: ScheduleSpec, logger: Logger): Promise<void> {
  const spec = { intervals: [{ every: `${s.intervalSeconds}s` }] };
  try {
    try {
      await client.schedule.create({
        scheduleId: s.scheduleId,
        spec,
        action: { type: 'startWorkflow', workflowType: s.workflowType, taskQueue: s.taskQueue, workflowId: `${s.scheduleId}-run` },
        policies: { overlap: 'SKIP', catchupWindow: '1 minute' },
      });
      logger.info({ scheduleId: s.scheduleId, intervalSeconds: s.intervalSeconds }, 'created a schedule');
    } catch (err) {
      if (!(err instanceof ScheduleAlreadyRunning)) throw err;
      await client.schedule.getHandle(s.scheduleId).update((previous) => ({ ...previous, spec }));
    }
  } catch (err) {
    if (isDependencyOutage(err)) throw err;
    logger.warn({ scheduleId: s.scheduleId, err: (err as Error).name }, `could not create the schedule; ${s.withoutIt} until it exists`);
  }
}

export function ensureReconcileSchedule(client: Client, taskQueue: string, intervalSeconds: number, logger: Logger): Promise<void> {
  return ensureSchedule(
    client,
    {
      scheduleId: reconcileScheduleId(taskQueue),
      workflowType: 'reconcileRunsWorkflow',
      taskQueue,
      intervalSeconds,
      withoutIt: 'runs whose workflow never started are not repaired',
    },
    logger,
  );
}

export function ensureJourneyRetentionSchedule(
  client: Client,
  taskQueue: string,
  logger: Logger,
  intervalSeconds = JOURNEY_RETENTION_INTERVAL_SECONDS,
): Promise<void> {
  return ensureSchedule(
    client,
    {
      scheduleId: journeyRetentionScheduleId(taskQueue),
      workflowType: 'purgeJourneyEventsWorkflow',
      taskQueue,
      intervalSeconds,
      withoutIt: 'expired journey events are not purged',
    },
    logger,
  );
}
