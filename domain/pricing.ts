// Usage-based pricing: the estimate shown before money moves, and the actual
// charge, which never exceeds the reservation. Each model alias has its own
// rate. No flat per-run price.
import type { ModelId } from './models.ts';
import type { Plan } from './planning/plan.ts';
import { estimateTokens } from './tokens.ts';
import { isToolId, type ToolId } from './tools.ts';

/** Every call of an operator's tool server (MCP) is priced alike, under this key. */
export const SERVER_TOOL = 'server_tool';
/** What a tool call is priced as: a built-in tool, or any server tool. */
export type PricedTool = ToolId | typeof SERVER_TOOL;

export interface PricingTable {
  version: string;
  /** Credits per 1,000 tokens, per model alias. */
  modelRates: Record<ModelId, number>;
  toolCredits: Record<PricedTool, number>;
  /** Output allowance per plan step, in tokens, on top of the input's own size (local runs). */
  outputTokensPerStep: number;
}

/** Bounds of an upstream model's agent loop; the estimate reserves for all of it. */
export interface AgentLimits {
  /** Model turns in the execute step. */
  maxTurns: number;
  /** max_tokens of each model call. */
  turnMaxTokens: number;
  /** Tool calls the loop may make. */
  maxToolCalls: number;
}

/** Planning asks at most twice: once, and once more when the first plan is invalid. */
export const PLAN_ATTEMPTS = 2;
/** Allowance for the service's own instructions and the tool catalog in every model prompt. */
export const PROMPT_OVERHEAD_TOKENS = 800;

/** Where a model alias is served: the deterministic model-free provider, an OpenAI-compatible upstream, or the in-process model. */
export const PROVIDERS = ['local', 'upstream', 'embedded'] as const;
export type Provider = (typeof PROVIDERS)[number];
/** The providers where a model plans and acts (runs take the agent loop); `local` has no model. */
export type ModelProvider = Exclude<Provider, 'local'>;

export interface UsageEstimate {
  model: ModelId;
  provider: Provider;
  /** The provider's own model behind the alias (an upstream's mapped name, the embedded model's file); null for the local provider. */
  served_model?: string | null;
  basis: {
    input_tokens: number;
    output_tokens_max: number;
    tool_calls: Partial<Record<PricedTool, number>>;
    /** Upstream runs: the loop's bounds, which the workflow enforces. */
    model_calls_max?: number;
    max_turns?: number;
    max_tool_calls?: number;
    /** Tool-calling runs: the tokens of the catalog (descriptions and schemas) every call carries, and of all tool results a model is shown, at most. */
    catalog_tokens?: number;
    tool_results_tokens_max?: number;
  };
  /** 'tool_calls': an upstream run planned and carried out by the tool-calling protocol (workflows/tool-calling.ts). */
  protocol?: 'tool_calls';
  amounts: { model: number; tools: number; total: number };
  terms: {
    unit: 'credit';
    pricing_version: string;
    credits_per_1k_tokens: number;
    tool_credits: Record<string, number>;
    method: string;
    settlement: string;
  };
}

export type UsageBasis = 'reported' | 'estimated' | 'mixed';

export interface ActualUsage {
  input_tokens: number;
  output_tokens: number;
  tool_calls: Partial<Record<PricedTool, number>>;
  model_calls?: number;
  /** How the tokens were known: the provider's report, the byte-count estimate, or both across calls. */
  usage_basis?: UsageBasis;
  amount: number;
}

const SETTLEMENT = 'Only the estimate is held. The charge is actual usage, never more than the hold; the rest is released. No flat per-run price.';

export function modelCredits(tokens: number, model: ModelId, pricing: PricingTable): number {
  return Math.ceil((tokens * pricing.modelRates[model]) / 1000);
}

/** Millionths of a credit in one credit. A model call's exact cost is kept in these. */
export const MICRO = 1_000_000;

/**
 * A model call's exact cost in micro-credits (rates are credits per 1,000 tokens, so this is exact
 * for rates of up to three decimals). Calls are summed exactly and a run rounds up once, at settle
 * (creditsOfMicro), so a run of many small calls is not charged a rounded-up credit for each.
 */
export function modelCostMicro(tokens: number, model: ModelId, pricing: PricingTable): number {
  return Math.round(tokens * pricing.modelRates[model] * 1000);
}

/** Whole credits for an exact amount: rounded up, once. */
export function creditsOfMicro(micro: number): number {
  return Math.ceil(micro / MICRO);
}

export function toolCalls(tools: string[]): Partial<Record<PricedTool, number>> {
  const counts: Partial<Record<PricedTool, number>> = {};
  for (const name of tools) {
    const t: PricedTool = isToolId(name) ? name : SERVER_TOOL;
    counts[t] = (counts[t] ?? 0) + 1;
  }
  return counts;
}

export function toolCredits(calls: Partial<Record<PricedTool, number>>, pricing: PricingTable): number {
  return Object.entries(calls).reduce((sum, [tool, n]) => sum + pricing.toolCredits[tool as PricedTool] * (n ?? 0), 0);
}

function terms(model: ModelId, pricing: PricingTable, method: string): UsageEstimate['terms'] {
  return {
    unit: 'credit',
    pricing_version: pricing.version,
    credits_per_1k_tokens: pricing.modelRates[model],
    tool_credits: { ...pricing.toolCredits },
    method,
    settlement: SETTLEMENT,
  };
}

/** A local run: the plan is known before money moves, so its steps are priced. */
export function estimateUsage(input: string, plan: Plan, pricing: PricingTable, model: ModelId = 'svc-workspace'): UsageEstimate {
  const inputTokens = estimateTokens(input);
  const outputMax = inputTokens + pricing.outputTokensPerStep * plan.steps.length;
  const calls = toolCalls(plan.steps.map((s) => s.tool));
  const modelAmount = modelCredits(inputTokens + outputMax, model, pricing);
  const tools = toolCredits(calls, pricing);
  return {
    model,
    provider: 'local',
    basis: { input_tokens: inputTokens, output_tokens_max: outputMax, tool_calls: calls },
    amounts: { model: modelAmount, tools, total: modelAmount + tools },
    terms: terms(model, pricing, "Byte-count token estimate (one token per 4 UTF-8 bytes, rounded up) times the model's rate, plus tool credits per call."),
  };
}

/**
 * A model's run (upstream or embedded): the plan is the model's, so the estimate covers the whole
 * bounded loop: every planning attempt and turn at its full max_tokens, and the
 * dearest tool for every allowed tool call.
 */
export function estimateAgentUsage(
  input: string,
  model: ModelId,
  pricing: PricingTable,
  limits: AgentLimits,
  provider: ModelProvider = 'upstream',
): UsageEstimate {
  const calls = PLAN_ATTEMPTS + limits.maxTurns;
  return loopEstimate(input, model, pricing, limits, {
    provider,
    calls,
    promptExtra: 0,
    method: `Up to ${calls} model calls (${PLAN_ATTEMPTS} planning, ${limits.maxTurns} turns), each priced at the input's byte-count estimate plus ${PROMPT_OVERHEAD_TOKENS} tokens of instructions and ${limits.turnMaxTokens} output tokens, times the model's rate; plus the dearest tool's credits for each of up to ${limits.maxToolCalls} tool calls. Settled by the usage the model reports.`,
  });
}

/** A model loop's estimate: `calls` calls, each priced at the input, the instructions, `promptExtra` and a full answer; plus the dearest tool for each tool call. */
function loopEstimate(
  input: string,
  model: ModelId,
  pricing: PricingTable,
  limits: AgentLimits,
  loop: { provider: ModelProvider; calls: number; promptExtra: number; method: string; basis?: Partial<UsageEstimate['basis']>; protocol?: 'tool_calls' },
): UsageEstimate {
  const inputTokens = estimateTokens(input);
  const { calls } = loop;
  const promptPerCall = inputTokens + PROMPT_OVERHEAD_TOKENS + loop.promptExtra;
  const modelAmount = modelCredits(calls * (promptPerCall + limits.turnMaxTokens), model, pricing);
  const tools = limits.maxToolCalls * Math.max(...Object.values(pricing.toolCredits));
  return {
    model,
    provider: loop.provider,
    ...(loop.protocol ? { protocol: loop.protocol } : {}),
    basis: {
      input_tokens: inputTokens,
      output_tokens_max: calls * limits.turnMaxTokens,
      tool_calls: {},
      model_calls_max: calls,
      max_turns: limits.maxTurns,
      max_tool_calls: limits.maxToolCalls,
      ...loop.basis,
    },
    amounts: { model: modelAmount, tools, total: modelAmount + tools },
    terms: terms(model, pricing, loop.method),
  };
}

/**
 * A tool-calling run's worst case: up to maxTurns model calls, each carrying the input, the
 * instructions, the whole catalog, every tool result it may be shown (all of them together capped at
 * `resultsMaxTokens`: the workflow withholds what would pass it) and the model's earlier turns, and
 * each answering up to turnMaxTokens; plus the dearest tool's credits for each tool call. So the hold
 * covers every call the loop admits.
 */
export function estimateToolCallingUsage(
  input: string,
  model: ModelId,
  pricing: PricingTable,
  limits: AgentLimits,
  sizes: { catalogTokens: number; resultsMaxTokens: number; reportCall?: boolean },
): UsageEstimate {
  const calls = limits.maxTurns + (sizes.reportCall ? 1 : 0);
  return loopEstimate(input, model, pricing, limits, {
    provider: 'upstream',
    protocol: 'tool_calls',
    calls,
    promptExtra: sizes.catalogTokens + sizes.resultsMaxTokens + calls * limits.turnMaxTokens,
    basis: { catalog_tokens: sizes.catalogTokens, tool_results_tokens_max: sizes.resultsMaxTokens },
    method: `Up to ${calls} model calls, each priced at the input's byte-count estimate plus ${PROMPT_OVERHEAD_TOKENS} tokens of instructions, the catalog's ${sizes.catalogTokens} tokens, at most ${sizes.resultsMaxTokens} tokens of tool results in all and the model's earlier turns, and ${limits.turnMaxTokens} output tokens, times the model's rate; plus the dearest tool's credits for each of up to ${limits.maxToolCalls} tool calls. Settled by the usage the model reports.`,
  });
}

/** Actual usage of a local run: tokens of the input and of the outputs produced, and the tools actually called. */
export function actualUsage(input: string, outputs: string[], toolsRun: string[], pricing: PricingTable, model: ModelId = 'svc-workspace'): ActualUsage {
  const inputTokens = estimateTokens(input);
  const outputTokens = outputs.reduce((sum, o) => sum + estimateTokens(o), 0);
  const calls = toolCalls(toolsRun);
  return {
    input_tokens: inputTokens,
    output_tokens: outputTokens,
    tool_calls: calls,
    usage_basis: 'estimated',
    amount: modelCredits(inputTokens + outputTokens, model, pricing) + toolCredits(calls, pricing),
  };
}
