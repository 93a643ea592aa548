// Money moves only here: the reservation hold, the settlement, and the
// compensating release. Each is idempotent per run, so retries are safe.
import type { Db } from '../db/client.ts';
import { actualUsage, type ActualUsage, type PricingTable } from '../domain/pricing.ts';
import { release, reserve, type ReserveOutcome, settle } from '../services/ledger.ts';
import type { StepResult } from './run-types.ts';

/** Runs hold once, at the reserve step. */
const HOLD_STEP = 'reserve';

export function ledgerActivities(deps: { db: Db; pricing: PricingTable }) {
  return {
    reserveCredits(input: { tenantId: string; runId: string; amount: number }): Promise<ReserveOutcome> {
      return reserve(deps.db, { ...input, step: HOLD_STEP, budgetScope: 'runs' });
    },

    async settleRun(input: { runId: string; input: string; results: StepResult[] }): Promise<ActualUsage & { charged: number; released: number }> {
      const ran = input.results.filter((r) => r.status === 'done');
      const usage = actualUsage(
        input.input,
        ran.map((r) => JSON.stringify(r.output ?? null)),
        ran.map((r) => r.tool),
        deps.pricing,
      );
      const outcome = await settle(deps.db, { runId: input.runId, step: HOLD_STEP, actualAmount: usage.amount });
      return { ...usage, ...outcome };
    },

    async releaseCredits(input: { runId: string }): Promise<void> {
      await release(deps.db, { runId: input.runId, step: HOLD_STEP });
    },
  };
}
