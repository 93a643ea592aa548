import type { ActivityDeps } from '../activities/index.ts';
import type { Config } from '../config/env.ts';
import type { Db } from '../db/client.ts';
import { deliveryUrlRules } from '../domain/delivery-url.ts';
import { localPlanner } from '../domain/planning/local-planner.ts';
import { buildProviders } from '../services/model-layer.ts';

/** The local planning provider; the API's estimates and the runs use the same one. */
export const planningProvider = localPlanner;

/** The activities' dependencies for this process: its database, the model providers and the configured settings. */
export function activityDeps(config: Config, db: Db): ActivityDeps {
  return {
    db,
    pricing: config.pricing,
    planner: planningProvider,
    providers: buildProviders(config.chat.upstream),
    agent: config.runs.agent,
    webhookTimeoutMs: config.runs.webhookTimeoutMs,
    deliveryRules: deliveryUrlRules(config.env),
    journeyRetentionDays: config.runs.journeyRetentionDays,
    approvalTimeoutMs: config.runs.approvalTimeoutMs,
    reconcileGraceMs: config.runs.reconcileGraceMs,
    publicBaseUrl: config.http.publicBaseUrl ?? `http://${config.http.host}:${config.http.port}`,
  };
}
