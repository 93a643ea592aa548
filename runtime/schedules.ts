// The reconcile Schedule: every RECONCILE_INTERVAL_SECONDS one reconcileRunsWorkflow
// on the worker's task queue (overlaps skipped). Created by the worker at start-up
// if absent; its interval is updated when the configuration changed.
import { type Client, ScheduleAlreadyRunning } from '@temporalio/client';
import type { Logger } from 'pino';

export const reconcileScheduleId = (taskQueue: string) => `gws-reconcile-runs-${taskQueue}`;

/** Creates or updates the schedule; a failure is logged, not fatal (the next start tries again). */
export async function ensureReconcileSchedule(client: Client, taskQueue: string, intervalSeconds: number, logger: Logger): Promise<void> {
  try {
    await upsertSchedule(client, taskQueue, intervalSeconds, logger);
  } catch (err) {
    logger.warn({ err: (err as Error).message }, 'could not create the reconcile schedule; runs whose workflow never started are not repaired until it exists');
  }
}

async function upsertSchedule(client: Client, taskQueue: string, intervalSeconds: number, logger: Logger): Promise<void> {
  const scheduleId = reconcileScheduleId(taskQueue);
  const spec = { intervals: [{ every: `${intervalSeconds}s` }] };
  try {
    await client.schedule.create({
      scheduleId,
      spec,
      action: { type: 'startWorkflow', workflowType: 'reconcileRunsWorkflow', taskQueue, workflowId: `${scheduleId}-run` },
      policies: { overlap: 'SKIP', catchupWindow: '1 minute' },
    });
    logger.info({ scheduleId, intervalSeconds }, 'created the reconcile schedule');
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await client.schedule.getHandle(scheduleId).update((previous) => ({ ...previous, spec }));
  }
}
