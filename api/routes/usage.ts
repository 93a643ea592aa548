// Usage and estimates: balance, open reservations and settled charges, and the
// byte-count estimate the run workflow itself uses.
import { z } from 'zod';
import type { UsageEstimate as Estimate } from '../../domain/pricing.ts';
import { defineRoute } from '../contract/route.ts';
import { admitModel, type ModelId } from '../../domain/models.ts';
import { ErrorObject, shouldRetryHeader } from '../contract/common.ts';
import { RunModel, UsageEstimate } from '../schemas/run.ts';

export interface UsageService {
  summary(tenantId: string): Promise<{
    balance: number;
    held: number;
    available: number;
    openReservations: { runId: string; amount: number; createdAt: Date }[];
    settledCharges: { runId: string | null; amount: number; usageBasis: string | null; createdAt: Date }[];
  }>;
  estimate(tenantId: string, request: { input: string; memory: boolean; model: ModelId }): Promise<Estimate>;
}

const Usage = z
  .object({
    object: z.literal('usage'),
    unit: z.literal('credit'),
    balance: z.int().meta({ description: 'Credits granted minus credits charged.' }),
    held: z.int().meta({ description: 'Credits in open reservations.' }),
    available: z.int().meta({ description: 'balance - held: what new runs can reserve.' }),
    open_reservations: z.array(z.object({ run_id: z.string(), amount: z.int(), created_at: z.string() })),
    settled_charges: z
      .array(
        z.object({
          run_id: z.string().nullable(),
          amount: z.int(),
          usage_basis: z.enum(['reported', 'estimated', 'mixed']).nullable().meta({
            description:
              "How the usage charged was known (extension): reported by the model provider, estimated (it reported none; the local provider), or mixed across a run's calls. Null for charges made before it was recorded.",
          }),
          created_at: z.string(),
        }),
      )
      .meta({
        description: 'The newest 100 charges.',
      }),
    billing_readiness: z.object({ credits_available: z.boolean(), note: z.string() }),
  })
  .meta({ id: 'Usage' });

const EstimateRequest = z
  .strictObject({
    input: z.string().max(20_000).trim().min(1),
    memory: z.boolean().default(false),
    model: RunModel,
  })
  .meta({ id: 'UsageEstimateRequest' });

export function usageRoutes(deps: { usage: UsageService }) {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/usage',
      operationId: 'getUsage',
      summary: 'Usage, balance and billing readiness',
      tags: ['usage'],
      auth: 'core',
      responses: { 200: { description: 'Current usage state.', schema: Usage } },
      async handler({ principal }) {
        const s = await deps.usage.summary(principal!.tenantId);
        return {
          status: 200,
          body: {
            object: 'usage',
            unit: 'credit',
            balance: s.balance,
            held: s.held,
            available: s.available,
            open_reservations: s.openReservations.map((r) => ({ run_id: r.runId, amount: r.amount, created_at: r.createdAt.toISOString() })),
            settled_charges: s.settledCharges.map((c) => ({
              run_id: c.runId,
              amount: c.amount,
              usage_basis: (c.usageBasis ?? null) as 'reported' | 'estimated' | 'mixed' | null,
              created_at: c.createdAt.toISOString(),
            })),
            billing_readiness: {
              credits_available: s.available > 0,
              note: 'Credits are granted by an operator (npm run credits -- grant). Commercial terms are confirmed before paid use.',
            },
          },
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/usage/estimate',
      operationId: 'estimateUsage',
      summary: 'Estimate a run before creating it',
      description:
        "The same estimate a run's estimate step makes, for the provider the tenant's routing policy gives the model: the local planner's plan priced, or the upstream agent loop's bounds. Nothing is reserved.",
      tags: ['usage'],
      auth: 'core',
      request: { body: EstimateRequest },
      responses: {
        200: { description: 'The estimate.', schema: UsageEstimate.extend({ object: z.literal('usage_estimate') }) },
        404: { description: 'Unknown model id (code model_not_found).', schema: ErrorObject },
        409: {
          description:
            "The tenant's routing policy sends the model to a provider this deployment has not configured (code model_not_routable, param model), as chat and run creation answer. Not retryable (`x-should-retry: false`).",
          schema: ErrorObject,
          headers: { 'x-should-retry': shouldRetryHeader },
        },
      },
      async handler({ body, principal }) {
        const estimate = await deps.usage.estimate(principal!.tenantId, { ...body, model: admitModel(body.model) });
        return { status: 200, body: { object: 'usage_estimate', ...estimate } };
      },
    }),
  ];
}
