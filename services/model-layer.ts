// The one model layer of runs and chat: the configured providers, and which of
// them serves a model alias for a tenant (its routing policy). Chat
// completions and run activities both go through here, so a model id means
// the same provider and the same rate everywhere.
import type { Db } from '../db/client.ts';
import type { ChatProvider } from '../domain/chat/types.ts';
import { errors } from '../domain/errors.ts';
import type { ModelId } from '../domain/models.ts';
import type { PlanningProvider } from '../domain/planning/plan.ts';
import { type AgentLimits, estimateAgentUsage, estimateUsage, type PricingTable, type Provider, type UsageEstimate } from '../domain/pricing.ts';
import { localProvider } from './chat/providers/local.ts';
import { type UpstreamConfig, upstreamProvider } from './chat/providers/upstream.ts';
import { providerFor } from './routing.ts';

export type Providers = Partial<Record<Provider, ChatProvider>>;

/** The local provider always; the OpenAI-compatible upstream when configured. */
export function buildProviders(upstream?: UpstreamConfig): Providers {
  return { local: localProvider, ...(upstream ? { upstream: upstreamProvider(upstream) } : {}) };
}

/** The providers that are configured, by id: what a routing policy may name. */
export function configuredProviders(providers: Providers): Provider[] {
  return (Object.keys(providers) as Provider[]).filter((id) => providers[id] !== undefined);
}

/**
 * The provider the tenant's routing policy names for `model` (local unless a policy says otherwise).
 * Given the configured `providers`, a policy naming one that is not configured (it was configured when
 * the policy was written) is refused with 409 model_not_routable, before anything is held or sent: chat,
 * the estimate and run creation answer that. Without them (a run's workflow, whose run was admitted
 * when the provider existed) the named provider is returned, and the run stops model_unavailable
 * before its first model call.
 */
export async function routeOf(db: Db, tenantId: string, model: ModelId, providers?: Providers): Promise<Provider> {
  const provider: Provider = (await providerFor(db, tenantId, model)) === 'upstream' ? 'upstream' : 'local';
  if (providers && !providers[provider]) throw errors.modelNotRoutable(model);
  return provider;
}

export interface RunEstimateDeps {
  db: Db;
  pricing: PricingTable;
  planner: PlanningProvider;
  agent: AgentLimits;
}

/** A run's estimate, shown before money moves: runs and POST /v1/usage/estimate share it. */
export async function estimateRun(
  deps: RunEstimateDeps,
  request: { tenantId: string; input: string; memory: boolean; model: ModelId },
): Promise<UsageEstimate> {
  const provider = await routeOf(deps.db, request.tenantId, request.model);
  if (provider === 'upstream') return estimateAgentUsage(request.input, request.model, deps.pricing, deps.agent);
  return estimateUsage(request.input, await deps.planner.plan(request), deps.pricing, request.model);
}
