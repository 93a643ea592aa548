// A run's money: the reservation hold, the settlement, and the compensating
// release (services/ledger.ts does the writing). Each is idempotent per run, so
// retries are safe. Model calls are summed exactly and rounded up once, here.
import type { Db } from '../db/client.ts';
import type { ModelId } from '../domain/models.ts';
import { actualUsage, type ActualUsage, creditsOfMicro, type PricingTable, type Provider, toolCalls, toolCredits } from '../domain/pricing.ts';
import type { StepResult } from '../domain/runs/run-types.ts';
import { release, reserve, type ReserveOutcome, settle } from '../services/ledger.ts';
import { basisOf, modelUsageOf } from '../services/model-usage.ts';

/** Runs hold once, at the reserve step. */
export const HOLD_STEP = 'reserve';

export interface SettleInput {
  runId: string;
  input: string;
  results: StepResult[];
  /** Absent in runs started before models were routed: local, svc-workspace. */
  provider?: Provider;
  model?: ModelId;
}

export function ledgerActivities(deps: { db: Db; pricing: PricingTable }) {
  /** A model's run (upstream or embedded): the model calls as the provider reported them, plus the tools that ran. */
  async function agentUsage(input: SettleInput, ran: StepResult[]): Promise<ActualUsage> {
    const model = await modelUsageOf(deps.db, input.runId);
    const calls = toolCalls(ran.map((r) => r.tool));
    return {
      input_tokens: model.promptTokens,
      output_tokens: model.completionTokens,
      tool_calls: calls,
      model_calls: model.calls,
      usage_basis: basisOf(model),
      // The calls' exact costs are summed and rounded up once, here, for the whole run.
      amount: creditsOfMicro(model.costMicro) + toolCredits(calls, deps.pricing),
    };
  }

  return {
    reserveCredits(input: { tenantId: string; runId: string; amount: number }): Promise<ReserveOutcome> {
      return reserve(deps.db, { ...input, step: HOLD_STEP, budgetScope: 'runs' });
    },

    async settleRun(input: SettleInput): Promise<ActualUsage & { charged: number; released: number }> {
      const ran = input.results.filter((r) => r.status === 'done');
      const usage =
        input.provider !== undefined && input.provider !== 'local'
          ? await agentUsage(input, ran)
          : actualUsage(
              input.input,
              ran.map((r) => JSON.stringify(r.output ?? null)),
              ran.map((r) => r.tool),
              deps.pricing,
              input.model,
            );
      const outcome = await settle(deps.db, { runId: input.runId, step: HOLD_STEP, actualAmount: usage.amount, usageBasis: usage.usage_basis });
      return { ...usage, ...outcome };
    },

    /**
     * Compensation: nothing more will run. Model calls already made (upstream runs) were real usage and
     * are charged, never past the hold; the rest of the hold is released.
     */
    async releaseCredits(input: { runId: string }): Promise<{ charged: number; released: number }> {
      const model = await modelUsageOf(deps.db, input.runId);
      const used = creditsOfMicro(model.costMicro);
      if (used > 0) return settle(deps.db, { runId: input.runId, step: HOLD_STEP, actualAmount: used, usageBasis: basisOf(model) });
      return release(deps.db, { runId: input.runId, step: HOLD_STEP });
    },
  };
}
