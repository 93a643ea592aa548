// The one model layer of runs and chat: the configured providers, and which of
// them serves a model alias for a tenant (its routing policy). Chat
// completions and run activities both go through here, so a model id means
// the same provider and the same rate everywhere.
import type { Db } from '../db/client.ts';
import type { ChatProvider } from '../domain/chat/types.ts';
import { errors } from '../domain/errors.ts';
import type { ModelId } from '../domain/models.ts';
import type { PlanningProvider } from '../domain/planning/plan.ts';
import {
  type AgentLimits,
  estimateAgentUsage,
  estimateToolCallingUsage,
  estimateUsage,
  PROVIDERS,
  type PricingTable,
  type Provider,
  type UsageEstimate,
} from '../domain/pricing.ts';
import type { EmbeddedModelConfig } from '../config/models.ts';
import { embeddedProvider } from './chat/providers/embedded.ts';
import { localProvider } from './chat/providers/local.ts';
import { type UpstreamConfig, upstreamProvider } from './chat/providers/upstream.ts';
import { sharedEmbeddedModel } from './embedded/embedded-model.ts';
import { providerFor } from './routing.ts';

export type Providers = Partial<Record<Provider, ChatProvider>>;

/** The local provider always; the OpenAI-compatible upstream and the embedded model when configured. */
export function buildProviders(upstream?: UpstreamConfig, embedded?: EmbeddedModelConfig): Providers {
  return {
    local: localProvider,
    ...(upstream ? { upstream: upstreamProvider(upstream) } : {}),
    ...(embedded ? { embedded: embeddedProvider(sharedEmbeddedModel(embedded)) } : {}),
  };
}

/** The providers that are configured, by id: what a routing policy may name. */
export function configuredProviders(providers: Providers): Provider[] {
  return (Object.keys(providers) as Provider[]).filter((id) => providers[id] !== undefined);
}

/** What decides a route: the configured providers (when the caller checks them) and the deployment's default provider. */
export interface RouteOptions {
  providers?: Providers;
  defaultProvider: Provider;
}

/**
 * The provider the tenant's routing policy names for `model` (the deployment's default provider when no
 * policy does). Given the configured `providers`, a policy naming one that is not configured (it was
 * configured when the policy was written) is refused with 409 model_not_routable, before anything is
 * held or sent: chat, the estimate and run creation answer that. Without them (a run's workflow, whose
 * run was admitted when the provider existed) the named provider is returned, and the run stops
 * model_unavailable before its first model call.
 */
export async function routeOf(db: Db, tenantId: string, model: ModelId, options: RouteOptions): Promise<Provider> {
  const named = await providerFor(db, tenantId, model, options.defaultProvider);
  const provider: Provider = (PROVIDERS as readonly string[]).includes(named) ? (named as Provider) : 'local';
  if (options.providers && !options.providers[provider]) throw errors.modelNotRoutable(model);
  return provider;
}

export interface RunEstimateDeps {
  db: Db;
  providers: Providers;
  defaultProvider: Provider;
  pricing: PricingTable;
  planner: PlanningProvider;
  agent: AgentLimits;
  /** Upstream runs take the tool-calling protocol (UPSTREAM_PROTOCOL=tool_calls): what sizes their estimate. */
  toolCalling?: ToolCallingSizes;
}

export interface ToolCallingSizes {
  /** The tokens of the catalog a tenant's run offers its model (the protocol's built-ins and its server tools). */
  catalogTokens(tenantId: string): Promise<number>;
  /** The most of all tool results a run's model is shown (RUN_TOOL_RESULTS_MAX_CHARS), in tokens. */
  resultsMaxTokens: number;
  /** The report is asked for in a call of its own (UPSTREAM_REPORT_WITH_TOOLS=false): one call more at most. */
  reportCall: boolean;
}

/** A run's estimate, shown before money moves: runs and POST /v1/usage/estimate share it. */
export async function estimateRun(
  deps: RunEstimateDeps,
  request: { tenantId: string; input: string; memory: boolean; model: ModelId },
): Promise<UsageEstimate> {
  const provider = await routeOf(deps.db, request.tenantId, request.model, { defaultProvider: deps.defaultProvider });
  const servedModel = deps.providers[provider]?.modelFor?.(request.model) ?? null;
  if (provider === 'upstream' && deps.toolCalling) {
    const sizes = {
      catalogTokens: await deps.toolCalling.catalogTokens(request.tenantId),
      resultsMaxTokens: deps.toolCalling.resultsMaxTokens,
      reportCall: deps.toolCalling.reportCall,
    };
    return { ...estimateToolCallingUsage(request.input, request.model, deps.pricing, deps.agent, sizes), served_model: servedModel };
  }
  // The embedded model takes the tool-calling protocol through its adapter (activities/embedded/), priced as its planning and turns always were.
  if (provider === 'embedded')
    return { ...estimateAgentUsage(request.input, request.model, deps.pricing, deps.agent, provider), protocol: 'tool_calls', served_model: servedModel };
  if (provider !== 'local') return { ...estimateAgentUsage(request.input, request.model, deps.pricing, deps.agent, provider), served_model: servedModel };
  return { ...estimateUsage(request.input, await deps.planner.plan(request), deps.pricing, request.model), served_model: null };
}
