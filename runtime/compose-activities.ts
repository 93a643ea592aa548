import type { ActivityDeps } from '../activities/index.ts';
import type { Config } from '../config/env.ts';
import type { Db } from '../db/client.ts';
import { localPlanner } from '../domain/planning/local-planner.ts';

/** The activities' dependencies for this process: its database and the configured settings. */
export function activityDeps(config: Config, db: Db): ActivityDeps {
  return {
    db,
    pricing: config.pricing,
    planner: localPlanner,
    webhookTimeoutMs: config.runs.webhookTimeoutMs,
    journeyRetentionDays: config.runs.journeyRetentionDays,
  };
}
