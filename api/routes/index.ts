// Every route of the service, in the order the OpenAPI document lists them.
import type { RouteSpec } from '../contract/route.ts';
import type { ToolAvailability } from '../../services/tool-servers.ts';
import type { HealthCheck } from '../../services/health.ts';
import type { RunControl } from '../../services/run-control.ts';
import type { VaultService } from '../../services/vault/index.ts';
import { vaultAccountRoutes } from './vault-account.ts';
import { vaultEntryRoutes } from './vault-entries.ts';
import type { Config } from '../../config/env.ts';
import type { listAudit } from '../../services/audit.ts';
import type { PlatformStores } from '../../services/platform/stores.ts';
import { agentRunRoutes } from './agent-runs.ts';
import { type ApprovalPolicyService, approverRoutes } from './approvers.ts';
import { agentRunEventRoutes } from './agent-run-events.ts';
import { agentRunChangeRoutes } from './agent-run-changes.ts';
import type { JourneyFeed } from '../../services/journey-feed.ts';
import type { StreamSlots } from '../../services/stream-slots.ts';
import { platformCatalogRoutes, type TenantStatus } from './platform-catalogs.ts';
import { platformStoreRoutes } from './platform-stores.ts';
import { platformValidationRoutes } from './platform-validation.ts';
import { sandboxJobRoutes } from './sandbox-jobs.ts';
import { type ChatService, chatRoutes } from './chat.ts';
import { type JourneyLister, journeyRoutes } from './journey-events.ts';
import { type UsageService, usageRoutes } from './usage.ts';
import { type CodecEndpointDeps, codecRoutes } from './codec.ts';
import { docsRoutes } from './docs.ts';
import { inboxRoutes } from './inbox.ts';
import { healthRoutes } from './health.ts';
import { jobRoutes } from './jobs.ts';
import { modelRoutes } from './models.ts';
import { trialRoutes } from './trial.ts';
import { webhookEndpointRoutes } from './webhook-endpoints.ts';
import type { WebhookEndpointService } from '../../services/webhook-endpoints.ts';

export interface RouteDeps {
  checkHealth: HealthCheck;
  /** What start-up is doing, or undefined once it has finished (runtime/startup.ts); absent: always finished. */
  starting?: () => string | undefined;
  buildDate?: string;
  publicBaseUrl?: string;
  runs: RunControl;
  usage: UsageService;
  listJourneyEvents: JourneyLister;
  /** The process's one reader of new journey events, for the live streams. */
  journeyFeed: JourneyFeed;
  /** The process's cap on open event streams, in all and per key. */
  streamSlots: StreamSlots;
  journeyRetentionDays: number;
  vault: VaultService;
  chat: ChatService;
  chatKeepAliveMs: number;
  platform: {
    config: Config;
    providerFor(tenantId: string, model: string): Promise<string>;
    stores: PlatformStores;
    tenantStatus(tenantId: string): Promise<TenantStatus>;
    /** The operator's server tools with their status for a tenant (GET /v1/tools). */
    serverTools(tenantId: string): Promise<ToolAvailability[]>;
    listAudit: (tenantId: string, query: Parameters<typeof listAudit>[2]) => ReturnType<typeof listAudit>;
  };
  /** Webhook endpoints for completion notifications (extension routes). */
  webhookEndpoints: WebhookEndpointService;
  /** Whether a key is still active (open event streams of a revoked key end at their next keep-alive). */
  keyActive?: (keyId: string) => Promise<boolean>;
  /** The tenant's approval policies (extension routes; approver keys only). */
  approvalPolicies: ApprovalPolicyService;
  /** The Temporal codec endpoint, when enabled (CODEC_ENDPOINT_ENABLED). */
  codecEndpoint?: CodecEndpointDeps;
}

export function allRoutes(deps: RouteDeps, getDocument: () => Record<string, unknown>): RouteSpec[] {
  const routes: RouteSpec[] = [
    ...healthRoutes(deps),
    ...jobRoutes(),
    ...trialRoutes(),
    ...modelRoutes(deps.platform.config.pricing),
    ...chatRoutes({ chat: deps.chat, keepAliveMs: deps.chatKeepAliveMs }),
    ...agentRunRoutes(deps),
    ...approverRoutes(deps),
    ...agentRunChangeRoutes({
      feed: deps.journeyFeed,
      slots: deps.streamSlots,
      listJourneyEvents: deps.listJourneyEvents,
      keepAliveMs: deps.chatKeepAliveMs,
      ...(deps.keyActive ? { keyActive: deps.keyActive } : {}),
    }),
    ...agentRunEventRoutes({
      runs: deps.runs,
      listJourneyEvents: deps.listJourneyEvents,
      keepAliveMs: deps.chatKeepAliveMs,
      changes: deps.journeyFeed,
      slots: deps.streamSlots,
      ...(deps.keyActive ? { keyActive: deps.keyActive } : {}),
    }),
    ...usageRoutes(deps),
    ...journeyRoutes({ listJourneyEvents: deps.listJourneyEvents, retentionDays: deps.journeyRetentionDays }),
    ...webhookEndpointRoutes(deps),
    ...platformCatalogRoutes({
      config: deps.platform.config,
      tenantStatus: deps.platform.tenantStatus,
      serverTools: deps.platform.serverTools,
      routeCount: () => routes.length,
    }),
    ...platformValidationRoutes(deps.platform),
    ...platformStoreRoutes(deps.platform),
    ...sandboxJobRoutes(deps.platform),
    ...vaultEntryRoutes(deps),
    ...vaultAccountRoutes(deps),
    ...(deps.codecEndpoint ? codecRoutes(deps.codecEndpoint) : []),
    ...docsRoutes(getDocument),
    ...inboxRoutes(),
  ];
  return routes;
}
