// Content-free lifecycle history of the tenant's runs.
import { z } from 'zod';
import { errors } from '../../domain/errors.ts';
import { ErrorObject } from '../contract/common.ts';
import { defineRoute } from '../contract/route.ts';

export type JourneyLister = (
  tenantId: string,
  limit: number,
) => Promise<{ id: number; kind: string; runId: string | null; state: string | null; createdAt: Date }[]>;

const JourneyEvent = z
  .object({
    id: z.string(),
    kind: z.string().meta({ description: 'run.accepted, run.planning, run.awaiting_approval, run.executing, run.step_finished, run.verifying, run.completed, run.failed, run.needs_attention.' }),
    run_id: z.string().nullable(),
    state: z.string().nullable(),
    created_at: z.string(),
  })
  .meta({ id: 'JourneyEvent', description: 'Content-free: never input, output, prompt or credential text.' });

export function journeyRoutes(deps: { listJourneyEvents: JourneyLister; retentionDays: number }) {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/journey-events',
      operationId: 'listJourneyEvents',
      summary: 'Content-free lifecycle history',
      description: `Your tenant's newest events first. Retention is bounded (${deps.retentionDays} days by default configuration).`,
      tags: ['events'],
      auth: 'core',
      request: { query: z.object({ limit: z.coerce.number().int().min(1).max(100).default(50) }) },
      responses: {
        200: { description: 'Events.', schema: z.object({ object: z.literal('list'), data: z.array(JourneyEvent) }).meta({ id: 'JourneyEventList' }) },
        503: { description: 'Journey history unavailable.', schema: ErrorObject },
      },
      async handler({ principal, query }) {
        let rows: Awaited<ReturnType<JourneyLister>>;
        try {
          rows = await deps.listJourneyEvents(principal!.tenantId, query.limit);
        } catch {
          throw errors.unavailable('Journey history is temporarily unavailable.');
        }
        return {
          status: 200,
          body: {
            object: 'list',
            data: rows.map((r) => ({ id: String(r.id), kind: r.kind, run_id: r.runId, state: r.state, created_at: r.createdAt.toISOString() })),
          },
        };
      },
    }),
  ];
}
