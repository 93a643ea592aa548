import type { ActivityDeps } from '../activities/index.ts';
import type { Config } from '../config/env.ts';
import type { Db } from '../db/client.ts';
import { deliveryUrlRules } from '../domain/delivery-url.ts';
import { localPlanner } from '../domain/planning/local-planner.ts';
import { type Logger, pino } from 'pino';
import { buildProviders, type ToolCallingSizes } from '../services/model-layer.ts';
import { catalogTokens } from '../services/tool-catalog.ts';
import { connectToolServers, type ToolServers } from '../services/tool-servers.ts';

const silentLogger = pino({ level: 'silent' });

/** The local planning provider; the API's estimates and the runs use the same one. */
export const planningProvider = localPlanner;

/**
 * The activities' dependencies for this process: its database, the model providers, the tool servers
 * (connected in the background; TOOL_SERVERS_FILE was checked when the configuration was loaded) and the settings.
 */
export function activityDeps(config: Config, db: Db, options: { logger?: Logger; toolServers?: ToolServers } = {}): ActivityDeps {
  const { servers, ...toolCalls } = config.runs.toolServers;
  const toolServers = options.toolServers ?? connectToolServers(servers, { logger: options.logger ?? silentLogger });
  return {
    toolServers,
    ...(config.runs.upstreamProtocol === 'tool_calls' ? { toolCalling: toolCallingSizes(config, db, toolServers) } : {}),
    upstreamServer: config.runs.upstreamServer,
    toolCalls,
    db,
    pricing: config.pricing,
    planner: planningProvider,
    providers: buildProviders(config.chat.upstream, config.models.embedded),
    defaultProvider: config.models.defaultProvider,
    agent: config.runs.agent,
    webhookTimeoutMs: config.runs.webhookTimeoutMs,
    deliveryRules: deliveryUrlRules(config.env),
    journeyRetentionDays: config.runs.journeyRetentionDays,
    approvalTimeoutMs: config.runs.approvalTimeoutMs,
    reconcileGraceMs: config.runs.reconcileGraceMs,
    ...(config.temporal.versioning.enabled ? { deploymentName: config.temporal.versioning.deploymentName } : {}),
    publicBaseUrl: config.http.publicBaseUrl ?? `http://${config.http.host}:${config.http.port}`,
  };
}

/** What sizes a tool-calling run's estimate: its tenant's catalog, and the most of all tool results its model is shown. */
export function toolCallingSizes(config: Config, db: Db, toolServers: ToolServers): ToolCallingSizes {
  return {
    catalogTokens: (tenantId) => catalogTokens(db, toolServers, tenantId, config.runs.upstreamServer.maxTools),
    resultsMaxTokens: Math.ceil(config.runs.toolResultsMaxChars / 4),
    reportCall: !config.runs.upstreamServer.reportWithTools,
  };
}
