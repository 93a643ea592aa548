import type { ActivityDeps } from '../activities/index.ts';
import type { Config } from '../config/env.ts';
import type { Db } from '../db/client.ts';
import { localPlanner } from '../domain/planning/local-planner.ts';

/** The planning provider of this deployment; the API's estimates and the runs use the same one. */
export const planningProvider = localPlanner;

/** The activities' dependencies for this process: its database and the configured settings. */
export function activityDeps(config: Config, db: Db): ActivityDeps {
  return {
    db,
    pricing: config.pricing,
    planner: planningProvider,
    webhookTimeoutMs: config.runs.webhookTimeoutMs,
    journeyRetentionDays: config.runs.journeyRetentionDays,
  };
}
