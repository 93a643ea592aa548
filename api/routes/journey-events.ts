// Content-free lifecycle history of the tenant's runs, and the list query and
// cursor that the journey and audit lists share.
import { z } from 'zod';
import { errors } from '../../domain/errors.ts';
import type { JourneyPage, JourneyQuery } from '../../services/journey.ts';
import { ErrorObject, limitQuery } from '../contract/common.ts';
import { decodeCursor, encodeCursor } from '../contract/cursor.ts';
import { defineRoute } from '../contract/route.ts';
import { RunProgressSchema } from '../schemas/run.ts';

export type JourneyLister = (tenantId: string, query: JourneyQuery) => Promise<JourneyPage>;

/** The query of the event lists: `limit` as the contract says, `run_id` and the runs' cursor pagination (extensions). */
export const EventListQuery = z.object({
  limit: limitQuery(100, 50),
  run_id: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .meta({ description: "Only this run's events (extension). An id that is not one of your runs yields an empty list." }),
  cursor: z.string().max(512).optional().meta({ description: 'The `next_cursor` of the previous page (extension).' }),
});

/** The list fields of the runs' cursor pagination. */
export const eventListPage = { has_more: z.boolean(), next_cursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page.' }) };

/** An event id (bigserial), within what a JavaScript number holds exactly. */
const EVENT_ID = /^(0|[1-9][0-9]{0,14})$/;

/** The position of the last event of a page, in the format of the runs' cursors (api/contract/cursor.ts). */
export const encodeEventCursor = (last: { id: number; createdAt: Date }) => encodeCursor({ createdAt: last.createdAt, id: String(last.id) });

/** The event id a cursor points after; 400 invalid_cursor for anything an event list did not hand out. */
export function decodeEventCursor(raw: string): number {
  const position = decodeCursor(raw);
  if (!EVENT_ID.test(position.id)) throw errors.invalidCursor();
  return Number(position.id);
}

export const JourneyEvent = z
  .object({
    id: z.string(),
    kind: z.string().meta({
      description:
        'run.accepted, run.planning, run.step.<step> (run.step.reserve, run.step.plan, run.step.settle), run.awaiting_approval, run.approval.counted (an approval counted while more are needed), run.executing, run.step_finished, run.verifying, run.completed, run.failed, run.needs_attention; chat.* (whose run_id is the completion id) and vault.* for chat and the vault.',
    }),
    run_id: z.string().nullable(),
    state: z.string().nullable(),
    progress: RunProgressSchema.nullable().meta({ description: "The run's progress at this event (extension); null for events that are not about a run." }),
    created_at: z.string(),
  })
  .meta({ id: 'JourneyEvent', description: 'Content-free: never input, output, prompt or credential text.' });

export function journeyView(r: JourneyPage['rows'][number]) {
  return { id: String(r.id), kind: r.kind, run_id: r.runId, state: r.state, progress: r.progress, created_at: r.createdAt.toISOString() };
}

export function journeyRoutes(deps: { listJourneyEvents: JourneyLister; retentionDays: number }) {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/journey-events',
      operationId: 'listJourneyEvents',
      summary: 'Content-free lifecycle history',
      description: `Your tenant's newest events first. Retention is bounded (${deps.retentionDays} days by default configuration). With \`run_id\`, one run's events; \`has_more\` and \`next_cursor\` page through the rest as GET /v1/agent-runs does (extensions). To follow a run live, use GET /v1/agent-runs/{run_id}/events.`,
      tags: ['events'],
      auth: 'core',
      request: { query: EventListQuery },
      responses: {
        200: {
          description: 'Events.',
          schema: z.object({ object: z.literal('list'), data: z.array(JourneyEvent), ...eventListPage }).meta({ id: 'JourneyEventList' }),
        },
        400: {
          description: 'Invalid `limit`, `run_id` or `cursor` (code invalid_cursor for a cursor this list did not return); `param` names it.',
          schema: ErrorObject,
        },
        503: { description: 'Journey history unavailable.', schema: ErrorObject },
      },
      async handler({ principal, query }) {
        const before = query.cursor === undefined ? undefined : decodeEventCursor(query.cursor);
        let page: JourneyPage;
        try {
          page = await deps.listJourneyEvents(principal!.tenantId, { limit: query.limit, runId: query.run_id, before });
        } catch {
          throw errors.unavailable('Journey history is temporarily unavailable.');
        }
        const last = page.rows[page.rows.length - 1];
        return {
          status: 200,
          body: {
            object: 'list',
            data: page.rows.map(journeyView),
            has_more: page.more,
            next_cursor: page.more && last ? encodeEventCursor(last) : null,
          },
        };
      },
    }),
  ];
}
