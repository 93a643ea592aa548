// All side effects live in activities. They receive their dependencies through
// this factory (the Temporal samples' dependency-injection pattern), so the
// worker process decides which database, providers and settings they use.
import type { Db } from '../db/client.ts';
import type { DeliveryUrlRules } from '../domain/delivery-url.ts';
import type { PlanningProvider } from '../domain/planning/plan.ts';
import type { AgentLimits, PricingTable, Provider } from '../domain/pricing.ts';
import { DEFAULT_UPSTREAM_SERVER, type UpstreamServer } from '../domain/agent/protocol-tools.ts';
import type { Providers, ToolCallingSizes } from '../services/model-layer.ts';
import type { ToolServers } from '../services/tool-servers.ts';
import { agentActivities } from './agent.ts';
import { approvalActivities } from './approval.ts';
import { journeyActivities } from './journey.ts';
import { ledgerActivities } from './ledger.ts';
import { memoryActivities } from './memory.ts';
import { notificationActivities } from './notify.ts';
import { planningActivities } from './planning.ts';
import { projectionActivities } from './projection.ts';
import { reconcileActivities } from './reconcile.ts';
import { toolTurnActivities } from './tool-turn.ts';
import { toolActivities } from './tools.ts';
import { verifyActivities } from './verify.ts';

export interface ActivityDeps {
  db: Db;
  pricing: PricingTable;
  planner: PlanningProvider;
  providers: Providers;
  /** The provider for a model alias the tenant has no routing policy for (fixed for a run at its estimate). */
  defaultProvider: Provider;
  agent: AgentLimits;
  webhookTimeoutMs: number;
  /** Which delivery targets may be sent to (loopback outside production only); checked again at send time. */
  deliveryRules: DeliveryUrlRules;
  journeyRetentionDays: number;
  approvalTimeoutMs: number;
  reconcileGraceMs: number;
  /** The workers' Worker Deployment, when they are versioned (the reconciler's nudge: activities/reconcile.ts). */
  deploymentName?: string;
  /** Base of the URLs in notifications (PUBLIC_BASE_URL, else http://HOST:PORT). */
  publicBaseUrl: string;
  /** The operator's tool servers (MCP), connected by this process; the worker closes them when it stops. */
  toolServers: ToolServers;
  toolCalls: { callTimeoutMs: number; resultMaxChars: number };
  /** Upstream runs take the tool-calling protocol: what sizes their estimate (absent: the plan schema). */
  toolCalling?: ToolCallingSizes;
  /** What the upstream server takes of a tool-calling run's requests (absent: both in one request, 128 tools). */
  upstreamServer?: UpstreamServer;
}

export function createActivities(deps: ActivityDeps) {
  return {
    ...projectionActivities(deps),
    ...planningActivities(deps),
    ...agentActivities({ ...deps, turnMaxTokens: deps.agent.turnMaxTokens }),
    ...toolTurnActivities({ ...deps, turnMaxTokens: deps.agent.turnMaxTokens, upstreamServer: deps.upstreamServer ?? DEFAULT_UPSTREAM_SERVER }),
    ...ledgerActivities(deps),
    ...toolActivities(deps),
    ...verifyActivities(),
    ...memoryActivities(deps),
    ...reconcileActivities(deps),
    ...journeyActivities(deps),
    ...notificationActivities(deps),
    ...approvalActivities(deps),
    /** Does nothing; used by probeWorkflow and the benchmark's baseline. */
    async noop(): Promise<void> {},
  };
}
