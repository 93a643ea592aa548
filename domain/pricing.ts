// Usage-based pricing: the estimate shown before money moves, and the actual
// charge, which never exceeds the reservation. No flat per-run price.
import type { Plan, PlanningProvider } from './planning/plan.ts';
import { estimateTokens } from './tokens.ts';
import type { ToolId } from './tools.ts';

export interface PricingTable {
  version: string;
  creditsPer1kTokens: number;
  toolCredits: Record<ToolId, number>;
  /** Output allowance per plan step, in tokens, on top of the input's own size. */
  outputTokensPerStep: number;
}

export interface UsageEstimate {
  basis: { input_tokens: number; output_tokens_max: number; tool_calls: Partial<Record<ToolId, number>> };
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

export interface ActualUsage {
  input_tokens: number;
  output_tokens: number;
  tool_calls: Partial<Record<ToolId, number>>;
  amount: number;
}

function modelCredits(tokens: number, pricing: PricingTable): number {
  return Math.ceil((tokens * pricing.creditsPer1kTokens) / 1000);
}

function toolCalls(tools: ToolId[]): Partial<Record<ToolId, number>> {
  const counts: Partial<Record<ToolId, number>> = {};
  for (const t of tools) counts[t] = (counts[t] ?? 0) + 1;
  return counts;
}

function toolCredits(calls: Partial<Record<ToolId, number>>, pricing: PricingTable): number {
  return Object.entries(calls).reduce((sum, [tool, n]) => sum + pricing.toolCredits[tool as ToolId] * (n ?? 0), 0);
}

export function estimateUsage(input: string, plan: Plan, pricing: PricingTable): UsageEstimate {
  const inputTokens = estimateTokens(input);
  const outputMax = inputTokens + pricing.outputTokensPerStep * plan.steps.length;
  const calls = toolCalls(plan.steps.map((s) => s.tool));
  const model = modelCredits(inputTokens + outputMax, pricing);
  const tools = toolCredits(calls, pricing);
  return {
    basis: { input_tokens: inputTokens, output_tokens_max: outputMax, tool_calls: calls },
    amounts: { model, tools, total: model + tools },
    terms: {
      unit: 'credit',
      pricing_version: pricing.version,
      credits_per_1k_tokens: pricing.creditsPer1kTokens,
      tool_credits: { ...pricing.toolCredits },
      method: 'Byte-count token estimate (one token per 4 UTF-8 bytes, rounded up) times the model rate, plus tool credits per call.',
      settlement: 'Only the estimate is held. The charge is actual usage, never more than the hold; the rest is released. No flat per-run price.',
    },
  };
}

/** Actual usage of what ran: tokens of the input and of the outputs produced, and the tools actually called. */
export function actualUsage(input: string, outputs: string[], toolsRun: ToolId[], pricing: PricingTable): ActualUsage {
  const inputTokens = estimateTokens(input);
  const outputTokens = outputs.reduce((sum, o) => sum + estimateTokens(o), 0);
  const calls = toolCalls(toolsRun);
  return {
    input_tokens: inputTokens,
    output_tokens: outputTokens,
    tool_calls: calls,
    amount: modelCredits(inputTokens + outputTokens, pricing) + toolCredits(calls, pricing),
  };
}

/** The estimate of a run: the configured planner's plan for this input, priced. Runs and POST /v1/usage/estimate share it. */
export async function estimateRunUsage(planner: PlanningProvider, request: { input: string; memory: boolean }, pricing: PricingTable): Promise<UsageEstimate> {
  return estimateUsage(request.input, await planner.plan(request), pricing);
}
