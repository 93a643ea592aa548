// Wires services into the API's dependencies. The API layer only ever sees
// these functions, never the database or Temporal connection themselves.
import type { Logger } from 'pino';
import type { AppDeps } from '../api/app.ts';
import type { Config } from '../config/env.ts';
import type { Database } from '../db/client.ts';
import { healthChecker } from '../services/health.ts';
import { listJourneyEvents } from '../services/journey.ts';
import { type JourneyFeed, journeyFeed } from '../services/journey-feed.ts';
import { streamSlots } from '../services/stream-slots.ts';
import { authenticate, keyIsActive } from '../services/keys.ts';
import { creditTotals, usageSummary } from '../services/ledger.ts';
import { reportFromDatabase } from '../services/metrics.ts';
import { countAwaitingApproval } from '../services/runs.ts';
import { runControl } from '../services/run-control.ts';
import { vaultService } from '../services/vault/index.ts';
import { listAudit } from '../services/audit.ts';
import { platformStores } from '../services/platform/stores.ts';
import { webhookEndpointService } from '../services/webhook-endpoints.ts';
import { tenantStatus } from '../services/platform/tenant-status.ts';
import { cacheRoutes, createRouteCache, providerFor, ROUTE_CHANGED_CHANNEL } from '../services/routing.ts';
import { type ChatDeps, prepareChat } from '../services/chat/completions.ts';
import { buildProviders, configuredProviders, estimateRun, routeOf } from '../services/model-layer.ts';
import { createRateLimiters, type RateLimitStore, rateLimitPool } from '../services/rate-limiters.ts';
import { createKeyCache, KEY_REVOKED_CHANNEL, type KeyCache } from '../services/key-cache.ts';
import { type Invalidatable, listenForInvalidations, registerLocalCache } from '../services/notified-cache.ts';
import { DEFAULT_SWEEPER_TIMING, startHoldSweeper } from '../services/hold-sweeper.ts';
import { tenantById } from '../services/tenants.ts';
import { connectToolServers, type ToolServers } from '../services/tool-servers.ts';
import { Redis } from 'ioredis';
import { planningProvider, toolCallingSizes } from './compose-activities.ts';
import type { TemporalHandle } from './temporal-client.ts';
import { telemetry } from './telemetry.ts';
import { checkPolicyTool, clearPolicy, listPolicies, setPolicy } from '../services/approval-policies.ts';

/**
 * `options.toolServers`: connections shared with the worker of the same process (`npm start`);
 * `options.starting`: start-up's progress (runtime/startup.ts), so /health and the routes that need a
 * dependency answer 503 "starting" until it has finished.
 */
export function composeApi(
  config: Config,
  logger: Logger,
  database: Database,
  temporal: TemporalHandle,
  options: { toolServers?: ToolServers; starting?: () => string | undefined } = {},
): AppDeps {
  const hotPath = hotPathStores(config, logger, database);
  const toolServers = options.toolServers ?? ownToolServers(config, logger, database);
  const sweeper = holdSweeper(config, logger, database);
  const feed = ownJourneyFeed(database);
  // Figures only the database knows, reported by the API's /metrics (runtime/metrics-server.ts).
  if (config.metrics) reportFromDatabase({ approvalsWaiting: () => countAwaitingApproval(database.db), creditTotals: () => creditTotals(database.db) });
  // Built once: providers and settings do not change per request.
  const chatDeps: ChatDeps = {
    db: database.db,
    owner: sweeper.instanceId,
    pricing: config.pricing,
    providers: buildProviders(config.chat.upstream, config.models.embedded),
    defaultProvider: config.models.defaultProvider,
    maxTokensDefault: config.chat.maxTokensDefault,
    refusalTerms: config.chat.refusalTerms,
    contextUrl: config.chat.contextUrl,
  };
  return {
    config,
    logger,
    tracing: telemetry().enabled,
    headSampling: telemetry().headSampling,
    buildDate: config.buildDate,
    publicBaseUrl: config.http.publicBaseUrl,
    runs: runControl({
      db: database.db,
      client: temporal.client,
      taskQueue: config.temporal.taskQueue,
      approvalTimeoutMs: config.runs.approvalTimeoutMs,
      // Start, approval and cancel answer 503 at once when the probe finds Temporal unreachable, and
      // after this long when it does not answer (or, for an approval, no worker applies the decision).
      temporalDeadlineMs: temporal.callDeadlineMs,
      probe: temporal.probe,
      checkRoute: async (tenantId, model) => {
        // With every provider configured, every route is routable: no read on the creation path.
        if (chatDeps.providers.local && chatDeps.providers.upstream && chatDeps.providers.embedded) return;
        await routeOf(database.db, tenantId, model, chatDeps); // 409 model_not_routable, as chat
      },
    }),
    usage: {
      summary: (tenantId) => usageSummary(database.db, tenantId),
      estimate: async (tenantId, request) => {
        await routeOf(database.db, tenantId, request.model, chatDeps); // 409 model_not_routable, as chat and run creation
        return estimateRun(
          {
            db: database.db,
            providers: chatDeps.providers,
            defaultProvider: config.models.defaultProvider,
            pricing: config.pricing,
            planner: planningProvider,
            agent: config.runs.agent,
            ...(config.runs.upstreamProtocol === 'tool_calls' ? { toolCalling: toolCallingSizes(config, database.db, toolServers) } : {}),
          },
          { tenantId, ...request },
        );
      },
    },
    listJourneyEvents: (tenantId, limit) => listJourneyEvents(database.db, tenantId, limit),
    journeyFeed: feed,
    streamSlots: streamSlots(config.http.streams),
    journeyRetentionDays: config.runs.journeyRetentionDays,
    vault: vaultService(database.db),
    chat: { prepare: (input, signal) => prepareChat(chatDeps, input, signal) },
    chatKeepAliveMs: config.chat.keepAliveMs,
    platform: {
      config,
      providerFor: (tenantId, model) => providerFor(database.db, tenantId, model, config.models.defaultProvider),
      stores: platformStores(database.db, { configuredProviders: configuredProviders(chatDeps.providers) }),
      tenantStatus: (tenantId) => tenantStatus(database.db, tenantId),
      serverTools: async (tenantId) => toolServers.forTenant(await tenantById(database.db, tenantId)),
      listAudit: (tenantId, limit) => listAudit(database.db, tenantId, limit),
    },
    webhookEndpoints: webhookEndpointService(database.db),
    approvalPolicies: {
      list: (tenantId) => listPolicies(database.db, tenantId),
      async set(tenantId, policy, actor) {
        if ('tool' in policy.scope) checkPolicyTool(policy.scope.tool, await tenantById(database.db, tenantId), config.runs.toolServers.servers);
        return setPolicy(database.db, tenantId, policy, actor);
      },
      clear: (tenantId, scope, actor) => clearPolicy(database.db, tenantId, scope, actor),
    },
    authenticate: (secret, kind) => authenticate(database.db, secret, kind, hotPath.keyCache),
    keyActive: (keyId) => keyIsActive(database.db, keyId),
    rateLimiters: createRateLimiters(config.rateLimits, hotPath.rateLimitStore),
    checkHealth: healthChecker({
      database: () => database.ping(),
      temporal: temporal.probe,
    }),
    ...(options.starting ? { starting: options.starting } : {}),
    ...(config.codecEndpoint.enabled
      ? {
          codecEndpoint: {
            codec: temporal.codec,
            namespace: config.temporal.connection.namespace,
            ...(config.codecEndpoint.token ? { token: config.codecEndpoint.token } : {}),
            corsOrigins: config.codecEndpoint.corsOrigins,
          },
        }
      : {}),
  };
}

/** The process's one reader of the journey table for live streams (services/journey-feed.ts); stopped before the database closes. */
function ownJourneyFeed(database: Database): JourneyFeed {
  const feed = journeyFeed(database.db);
  const closeDatabase = database.close.bind(database);
  database.close = async () => {
    feed.close();
    await closeDatabase();
  };
  return feed;
}

/**
 * The API's own connections to the operator's tool servers (GET /v1/tools shows what they list), for
 * an API process apart from the worker; closed with the database, as the other connections are.
 */
function ownToolServers(config: Config, logger: Logger, database: Database): ToolServers {
  const toolServers = connectToolServers(config.runs.toolServers.servers, { logger });
  const closeDatabase = database.close.bind(database);
  database.close = async () => {
    await toolServers.close();
    await closeDatabase();
  };
  return toolServers;
}

/**
 * This process's lease and the sweeper that releases chat holds of processes that died
 * (services/hold-sweeper.ts); stopped, and the lease ended, before the database closes.
 */
function holdSweeper(config: Config, logger: Logger, database: Database) {
  const { leaseMs, sweepMs } = config.chat.holds;
  // The longest a chat may run: the upstream's whole answer, the context_url fetch, and a minute of slack.
  const maxChatMs = (config.chat.upstream?.timeoutMs ?? 60_000) + config.chat.contextUrl.timeoutMs + 60_000;
  const sweeper = startHoldSweeper(database.db, logger, {
    ...DEFAULT_SWEEPER_TIMING,
    leaseMs,
    renewMs: Math.max(1, Math.floor(leaseMs / 3)),
    sweepMs,
    maxChatMs,
  });
  const closeDatabase = database.close.bind(database);
  database.close = async () => {
    await sweeper.stop();
    await closeDatabase();
  };
  return sweeper;
}

/**
 * What every authenticated request touches (services/rate-limiters.ts, services/notified-cache.ts):
 * the rate-limit store (Redis with REDIS_URL, else a synchronous_commit=off pool on Postgres, else
 * memory) and, on Postgres, the key and routing-policy caches with their listener. Their connections are
 * closed with the database (its close() is wrapped), which every entry point already stops.
 */
function hotPathStores(config: Config, logger: Logger, database: Database) {
  const closers: (() => Promise<unknown>)[] = [];
  let rateLimitStore: RateLimitStore = { kind: 'memory' };
  if (config.redis.url) {
    // Auto-pipelining sends the commands of one event-loop turn (one per request being served) in
    // one socket write: a write costs more CPU than the rest of the limit's work together.
    const client = new Redis(config.redis.url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, enableAutoPipelining: true });
    let failing = false;
    client.on('error', (err: Error) => {
      if (!failing) logger.warn({ err: err.message }, 'redis unreachable: rate limits are counted in memory until it is back');
      failing = true;
    });
    client.on('ready', () => {
      if (failing) logger.info('redis reachable again: rate limits are shared again');
      failing = false;
    });
    rateLimitStore = { kind: 'redis', client, keyPrefix: config.redis.keyPrefix };
    closers.push(() => client.quit().catch(() => client.disconnect()));
  } else if (database.kind === 'postgres' && config.database.url) {
    const pool = rateLimitPool(config.database.url, Math.min(config.database.poolSize, 5));
    rateLimitStore = { kind: 'postgres', pool };
    closers.push(() => pool.end());
  }
  let keyCache: KeyCache | undefined;
  if (database.kind === 'postgres' && config.database.url) {
    // Rows read on every request, kept in process and dropped on their NOTIFY (services/notified-cache.ts).
    const caches = new Map<string, Invalidatable>();
    const undo: (() => void)[] = [];
    if (config.keyCache.ttlMs > 0) {
      keyCache = createKeyCache({ ttlMs: config.keyCache.ttlMs });
      caches.set(KEY_REVOKED_CHANNEL, keyCache);
      undo.push(registerLocalCache(database.db, KEY_REVOKED_CHANNEL, keyCache));
    }
    if (config.routeCache.ttlMs > 0) {
      const routeCache = createRouteCache({ ttlMs: config.routeCache.ttlMs });
      caches.set(ROUTE_CHANGED_CHANNEL, routeCache);
      undo.push(cacheRoutes(database.db, routeCache));
    }
    if (caches.size > 0) {
      let wasLost = false;
      const listener = listenForInvalidations(config.database.url, caches, {
        onState: (state, err) => {
          if (state === 'lost' && !wasLost)
            logger.warn({ err: err?.message }, 'cache invalidation listener lost: keys and routing policies are read on every request until it is back');
          if (state === 'listening' && wasLost) logger.info('cache invalidation listener back: caches on again');
          else if (state === 'listening') logger.debug('cache invalidation listener listening: caches on');
          wasLost = state === 'lost';
        },
      });
      closers.push(async () => {
        for (const u of undo) u();
        await listener.close();
      });
    }
  }
  if (closers.length > 0) {
    const closeDatabase = database.close.bind(database);
    database.close = async () => {
      await Promise.allSettled(closers.map((close) => close()));
      await closeDatabase();
    };
  }
  return { rateLimitStore, keyCache };
}
