// Live progress of a run: its journey events as server-sent events (api/contract/sse.ts).
// GET /v1/agent-runs/{run_id} answers the same stream to `Accept: text/event-stream`.
import type Koa from 'koa';
import { z } from 'zod';
import { isTerminal } from '../../domain/runs/states.ts';
import type { JourneyFeed } from '../../services/journey-feed.ts';
import type { RunControl } from '../../services/run-control.ts';
import type { StreamSlots } from '../../services/stream-slots.ts';
import { DEFAULT_FOLLOW, type FollowOptions, followRun, RUN_END_EVENT_ID } from '../../services/run-events.ts';
import { ErrorObject } from '../contract/common.ts';
import { defineRoute, type ResponseSpec, type RouteResult } from '../contract/route.ts';
import { eventStream, RECONNECT_MS, sseFrame } from '../contract/sse.ts';
import { RunProgressSchema, RunStatus } from '../schemas/run.ts';
import type { JourneyLister } from './journey-events.ts';

export const RunEvent = z
  .object({
    id: z.string().meta({
      description: `The journey event id, also the SSE \`id:\` field; \`${RUN_END_EVENT_ID}\` for the closing event made from the run when its last events are no longer retained.`,
    }),
    kind: z.string().meta({
      description:
        'Also the SSE `event:` field: run.accepted, run.planning, run.step.<step>, run.awaiting_approval, run.approval.counted (an approval counted while more are needed), run.executing, run.step_finished, run.verifying, run.completed, run.failed, run.needs_attention.',
    }),
    run_id: z.string(),
    state: RunStatus,
    progress: RunProgressSchema,
    created_at: z.string(),
  })
  .meta({ id: 'RunEvent', description: "The `data:` of one event of a run's stream (JSON). Content-free: never input, output, reason or credential text." });

/** An event id this stream sent: a journey event id, or the closing event's. */
const LastEventId = z
  .string()
  .regex(new RegExp(`^(0|[1-9][0-9]{0,14}|${RUN_END_EVENT_ID})$`), 'must be the id of an event this stream sent')
  .meta({ description: 'Resume after this event: only later events are sent. EventSource sends it when it reconnects.' });

export const LastEventIdHeaders = z.object({ 'last-event-id': LastEventId.optional() });

export const STREAM_DESCRIPTION = `Server-sent events (extension) of the run's journey events, oldest first, as they are recorded: \`id:\` the event id, \`event:\` its kind, \`data:\` a RunEvent (its state and progress, no content). The stream starts with \`retry: ${RECONNECT_MS}\`, sends a \`: keep-alive\` comment every CHAT_KEEPALIVE_MS (15 s by default) and ends after the event of a terminal state (completed, failed, needs_attention); for a run that already ended it sends the retained events and ends.

Resuming: with \`Last-Event-ID\` (the header EventSource sends when it reconnects; \`last_event_id\` in the query for clients that cannot set headers) only later events are sent. If the run ended and nothing follows that event, the answer is 204, which tells EventSource to stop reconnecting.

Retention: journey events are purged after the retention window. When a run ended and its terminal event is no longer retained, the stream closes with an event made from the run itself, id \`${RUN_END_EVENT_ID}\`. Events arrive within about a second of being recorded. At server shutdown, or when the database stays unavailable, the stream ends without a terminal event: reconnect with Last-Event-ID.`;

/** The 200 headers of the stream. */
export const streamHeaders = {
  'Cache-Control': z.string().meta({ description: '`no-cache, no-transform`: the stream is never cached or transformed.' }),
  'X-Accel-Buffering': z.literal('no').meta({ description: 'Tells nginx-style proxies not to buffer the stream.' }),
};

/** The answers of a stream refused by the process's cap on open streams (services/stream-slots.ts). */
export const streamCapResponses = {
  429: {
    description:
      'This key already holds STREAMS_PER_KEY streams open on this server (code rate_limit_exceeded), or the per-key rate limit. Close one, or retry after Retry-After.',
    schema: ErrorObject,
  },
  503: {
    description:
      'This server holds STREAMS_PER_PROCESS streams open, or a dependency is unavailable (code service_unavailable). Retry after Retry-After, on any replica.',
    schema: ErrorObject,
  },
} satisfies Record<number, ResponseSpec>;

export const streamEnded204: ResponseSpec = {
  description: `The run ended and nothing follows the \`Last-Event-ID\` (or \`last_event_id\`) event: no stream. EventSource stops reconnecting on 204.`,
};

export interface RunEventDeps {
  runs: Pick<RunControl, 'get'>;
  listJourneyEvents: JourneyLister;
  /** Interval of the `: keep-alive` comments. */
  keepAliveMs: number;
  /** Polling and grace intervals; DEFAULT_FOLLOW when absent. */
  follow?: Partial<Omit<FollowOptions, 'signal' | 'changes'>>;
  /** The process's journey feed: followers read when their run changed instead of polling. */
  changes?: JourneyFeed;
  /** The process's cap on open streams, in all and per key. */
  slots: StreamSlots;
  /** Whether a key is still active: a stream whose key was revoked ends at its next keep-alive. */
  keyActive?: (keyId: string) => Promise<boolean>;
}

/** Does the request ask for the event stream rather than JSON? (`Accept: text/event-stream`, as EventSource sends.) */
export const wantsEventStream = (ctx: Koa.Context) => ctx.accepts('application/json', 'text/event-stream') === 'text/event-stream';

/** Answers a run's event stream (or 204, or 404 for a run the tenant does not have). */
export function runEventStream(deps: RunEventDeps) {
  const follow = { ...DEFAULT_FOLLOW, ...deps.follow };
  return async function streamRunEvents(
    ctx: Koa.Context,
    tenantId: string,
    keyId: string,
    runId: string,
    lastEventId: string | undefined,
  ): Promise<RouteResult> {
    const run = await deps.runs.get(tenantId, runId);
    // The closing event is sent only for a run that ended; any other id is a journey event id.
    const after = lastEventId === undefined || lastEventId === RUN_END_EVENT_ID ? 0 : Number(lastEventId);
    if (isTerminal(run.status) && lastEventId !== undefined) {
      const next = lastEventId === RUN_END_EVENT_ID ? null : await deps.listJourneyEvents(tenantId, { runId, after, limit: 1 });
      if (!next || next.rows.length === 0) return { status: 204, body: null };
    }

    const source = { getRun: (t: string, r: string) => deps.runs.get(t, r), listJourneyEvents: deps.listJourneyEvents };
    const release = deps.slots.acquire(keyId);
    return eventStream(
      ctx,
      {
        keepAliveMs: deps.keepAliveMs,
        what: 'run event stream',
        logFields: { run_id: runId },
        onEnd: release,
        ...(deps.keyActive ? { stillAuthorized: () => deps.keyActive!(keyId) } : {}),
      },
      async (write, signal) => {
        for await (const event of followRun(source, tenantId, run, after, { ...follow, ...(deps.changes ? { changes: deps.changes } : {}), signal }))
          write(sseFrame(event.id, event.kind, event));
      },
    );
  };
}

export function agentRunEventRoutes(deps: RunEventDeps) {
  const stream = runEventStream(deps);
  return [
    defineRoute({
      method: 'get',
      path: '/v1/agent-runs/{run_id}/events',
      operationId: 'streamAgentRunEvents',
      summary: "Follow a run's progress live (server-sent events)",
      description: STREAM_DESCRIPTION,
      tags: ['runs'],
      auth: 'reader',
      request: {
        params: z.object({ run_id: z.string().min(1).max(64) }),
        query: z.object({ last_event_id: LastEventId.optional() }),
        headers: LastEventIdHeaders,
      },
      responses: {
        200: { description: 'text/event-stream of RunEvent `data:`.', contentType: 'text/event-stream', eventData: RunEvent, headers: streamHeaders },
        204: streamEnded204,
        404: { description: 'No run with this id for your tenant.', schema: ErrorObject },
        ...streamCapResponses,
      },
      handler({ principal, params, query, headers, ctx }) {
        return stream(ctx, principal!.tenantId, principal!.keyId, params.run_id, headers['last-event-id'] ?? query.last_event_id);
      },
    }),
  ];
}
