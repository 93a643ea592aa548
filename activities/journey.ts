// Journey retention: deletes every tenant's journey events older than
// JOURNEY_RETENTION_DAYS. Run by the journey retention Schedule
// (runtime/schedules.ts), so tenants that never end a run (chat only) are
// purged too. Idempotent: a retry deletes what is still expired.
import { Context } from '@temporalio/activity';
import type { Db } from '../db/client.ts';
import { purgeExpiredJourneyEvents } from '../services/journey.ts';

export interface JourneyRetentionOutcome {
  retentionDays: number;
  deleted: number;
}

export function journeyActivities(deps: { db: Db; journeyRetentionDays: number }) {
  return {
    async purgeExpiredJourneyEvents(): Promise<JourneyRetentionOutcome> {
      const deleted = await purgeExpiredJourneyEvents(deps.db, deps.journeyRetentionDays, { onBatch: () => Context.current().heartbeat() });
      return { retentionDays: deps.journeyRetentionDays, deleted };
    },
  };
}
