// GET /v1/agent-runs/events: every state change of the tenant's runs, live, as server-sent events.
// The inbox's list follows it. All streams of a process read from one journey feed
// (services/journey-feed.ts), so open pages cost the database nothing more each.
import { z } from 'zod';
import type { JourneyFeed } from '../../services/journey-feed.ts';
import type { StreamSlots } from '../../services/stream-slots.ts';
import type { RunEvent as RunEventData } from '../../services/run-events.ts';
import { ErrorObject } from '../contract/common.ts';
import { defineRoute } from '../contract/route.ts';
import { eventStream, RECONNECT_MS, sseFrame } from '../contract/sse.ts';
import { RunEvent, streamCapResponses, streamHeaders } from './agent-run-events.ts';
import type { JourneyLister } from './journey-events.ts';

/** Events replayed after a Last-Event-ID at most; with more missed, the stream says `reset` instead. */
const REPLAY_LIMIT = 100;

const EVENT_ID = z
  .string()
  .regex(/^(0|[1-9][0-9]{0,14})$/, 'must be the id of an event this stream sent')
  .meta({ description: 'Resume after this event. EventSource sends it when it reconnects.' });

export const READY_EVENT = 'ready';
export const RESET_EVENT = 'reset';

const DESCRIPTION = `Server-sent events (extension) of every state change of your runs, as they are recorded: \`id:\` the journey event id, \`event:\` its kind, \`data:\` a RunEvent (run id, state and progress; no content). Fetch a run (GET /v1/agent-runs/{run_id}) for what it holds.

The stream starts with \`retry: ${RECONNECT_MS}\`, then an \`event: ${READY_EVENT}\` (no id, \`data: {}\`) once it is listening: list the runs you need after it, and apply the events that follow. It sends a \`: keep-alive\` comment every CHAT_KEEPALIVE_MS (15 s by default) and never ends on its own.

Resuming: with \`Last-Event-ID\` (or \`last_event_id\` in the query) the events recorded after that one are sent first, up to ${REPLAY_LIMIT}; when more were missed, \`event: ${RESET_EVENT}\` (\`data: {}\`) comes instead, meaning: list again. Events arrive within about a second of being recorded. Every open stream of an API process is served by one reader of the journey table, not one each.`;

export interface RunChangeDeps {
  feed: JourneyFeed;
  slots: StreamSlots;
  listJourneyEvents: JourneyLister;
  keepAliveMs: number;
  /** Whether a key is still active: a stream whose key was revoked ends at its next keep-alive. */
  keyActive?: (keyId: string) => Promise<boolean>;
}

export function agentRunChangeRoutes(deps: RunChangeDeps) {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/agent-runs/events',
      operationId: 'streamAgentRunChanges',
      summary: "Follow every run's state changes live (server-sent events)",
      description: DESCRIPTION,
      tags: ['runs'],
      auth: 'reader',
      request: {
        query: z.object({ last_event_id: EVENT_ID.optional() }),
        headers: z.object({ 'last-event-id': EVENT_ID.optional() }),
      },
      responses: {
        200: { description: 'text/event-stream of RunEvent `data:`.', contentType: 'text/event-stream', eventData: RunEvent, headers: streamHeaders },
        400: { description: 'A Last-Event-ID this stream did not send.', schema: ErrorObject },
        ...streamCapResponses,
      },
      handler({ principal, query, headers, ctx }) {
        const tenantId = principal!.tenantId;
        const resumeAfter = headers['last-event-id'] ?? query.last_event_id;
        const release = deps.slots.acquire(principal!.keyId);
        const keyId = principal!.keyId;
        const stillAuthorized = deps.keyActive ? () => deps.keyActive!(keyId) : undefined;
        const options = { keepAliveMs: deps.keepAliveMs, what: 'run change stream', onEnd: release, ...(stillAuthorized ? { stillAuthorized } : {}) };
        return eventStream(ctx, options, async (write, signal) => {
          // Listen first, then catch up: an event recorded meanwhile is buffered, and sent once.
          const buffered: RunEventData[] = [];
          let live = false;
          const sent = new Set<string>();
          const send = (e: RunEventData) => {
            if (sent.has(e.id)) return;
            write(sseFrame(e.id, e.kind, e));
          };
          const unsubscribe = deps.feed.subscribe(tenantId, (e) => (live ? send(e) : buffered.push(e)));
          try {
            await deps.feed.listening();
            if (resumeAfter !== undefined) {
              const page = await deps.listJourneyEvents(tenantId, { after: Number(resumeAfter), limit: REPLAY_LIMIT });
              if (page.more) write(`event: ${RESET_EVENT}\ndata: {}\n\n`);
              else
                for (const row of page.rows) {
                  if (row.runId === null || row.progress === null) continue;
                  const event = {
                    id: String(row.id),
                    kind: row.kind,
                    run_id: row.runId,
                    state: row.progress.state,
                    progress: row.progress,
                    created_at: row.createdAt.toISOString(),
                  };
                  send(event);
                  sent.add(event.id);
                }
            }
            write(`event: ${READY_EVENT}\ndata: {}\n\n`);
            live = true;
            for (const e of buffered.splice(0)) send(e);
            await new Promise<void>((resolve) => {
              if (signal.aborted) return resolve();
              signal.addEventListener('abort', () => resolve(), { once: true });
            });
          } finally {
            unsubscribe();
          }
        });
      },
    }),
  ];
}
