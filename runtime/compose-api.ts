// Wires services into the API's dependencies. The API layer only ever sees
// these functions, never the database or Temporal connection themselves.
import type { Logger } from 'pino';
import type { AppDeps } from '../api/app.ts';
import type { Config } from '../config/env.ts';
import type { Database } from '../db/client.ts';
import { healthChecker } from '../services/health.ts';
import { listJourneyEvents } from '../services/journey.ts';
import { authenticate } from '../services/keys.ts';
import { usageSummary } from '../services/ledger.ts';
import { runControl, TEMPORAL_CALL_DEADLINE_MS } from '../services/run-control.ts';
import { vaultService } from '../services/vault/index.ts';
import { listAudit } from '../services/audit.ts';
import { platformStores } from '../services/platform/stores.ts';
import { webhookEndpointService } from '../services/webhook-endpoints.ts';
import { tenantStatus } from '../services/platform/tenant-status.ts';
import { providerFor } from '../services/routing.ts';
import { type ChatDeps, prepareChat } from '../services/chat/completions.ts';
import { buildProviders, configuredProviders, estimateRun, routeOf } from '../services/model-layer.ts';
import { createRateLimiters } from '../services/rate-limiters.ts';
import { planningProvider } from './compose-activities.ts';
import type { TemporalHandle } from './temporal-client.ts';

export function composeApi(config: Config, logger: Logger, database: Database, temporal: TemporalHandle): AppDeps {
  // Built once: providers and settings do not change per request.
  const chatDeps: ChatDeps = {
    db: database.db,
    pricing: config.pricing,
    providers: buildProviders(config.chat.upstream),
    maxTokensDefault: config.chat.maxTokensDefault,
    refusalTerms: config.chat.refusalTerms,
    contextUrl: config.chat.contextUrl,
  };
  return {
    config,
    logger,
    buildDate: config.buildDate,
    publicBaseUrl: config.http.publicBaseUrl,
    runs: runControl({
      db: database.db,
      client: temporal.client,
      taskQueue: config.temporal.taskQueue,
      approvalTimeoutMs: config.runs.approvalTimeoutMs,
      // Start, approval and cancel answer 503 at once when the probe finds Temporal unreachable, and
      // after this long when it does not answer (or, for an approval, no worker applies the decision).
      temporalDeadlineMs: TEMPORAL_CALL_DEADLINE_MS,
      probe: temporal.probe,
      checkRoute: async (tenantId, model) => {
        // With every provider configured, every route is routable: no read on the creation path.
        if (chatDeps.providers.local && chatDeps.providers.upstream) return;
        await routeOf(database.db, tenantId, model, chatDeps.providers); // 409 model_not_routable, as chat
      },
    }),
    usage: {
      summary: (tenantId) => usageSummary(database.db, tenantId),
      estimate: async (tenantId, request) => {
        await routeOf(database.db, tenantId, request.model, chatDeps.providers); // 409 model_not_routable, as chat and run creation
        return estimateRun({ db: database.db, pricing: config.pricing, planner: planningProvider, agent: config.runs.agent }, { tenantId, ...request });
      },
    },
    listJourneyEvents: (tenantId, limit) => listJourneyEvents(database.db, tenantId, limit),
    journeyRetentionDays: config.runs.journeyRetentionDays,
    vault: vaultService(database.db),
    chat: { prepare: (input, signal) => prepareChat(chatDeps, input, signal) },
    chatKeepAliveMs: config.chat.keepAliveMs,
    platform: {
      config,
      providerFor: (tenantId, model) => providerFor(database.db, tenantId, model),
      stores: platformStores(database.db, { configuredProviders: configuredProviders(chatDeps.providers) }),
      tenantStatus: (tenantId) => tenantStatus(database.db, tenantId),
      listAudit: (tenantId, limit) => listAudit(database.db, tenantId, limit),
    },
    webhookEndpoints: webhookEndpointService(database.db),
    authenticate: (secret, kind) => authenticate(database.db, secret, kind),
    rateLimiters: createRateLimiters(config.rateLimits, database.pool),
    checkHealth: healthChecker({
      database: () => database.ping(),
      temporal: temporal.probe,
    }),
    ...(config.codecEndpoint.enabled
      ? {
          codecEndpoint: {
            codec: temporal.codec,
            namespace: config.temporal.namespace,
            ...(config.codecEndpoint.token ? { token: config.codecEndpoint.token } : {}),
            corsOrigins: config.codecEndpoint.corsOrigins,
          },
        }
      : {}),
  };
}
