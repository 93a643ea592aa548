// Follows a run to its end: reads GET /v1/agent-runs/{run_id}/events (server-sent events; reconnects
// with Last-Event-ID when the stream drops before a terminal event), shows each event, shows what an
// approval waits for, then reads the run once more for the final state and summary.
import type { AgentRun, GwsClient, RunEvent } from '../../client/index.ts';
import type { RunDisplay } from './display.ts';
import { ApiError, CliError, unwrap } from './errors.ts';
import { EXIT } from './exit-codes.ts';
import { isTerminalState } from './format.ts';
import { followSse } from './sse.ts';

export interface WatchOptions {
  /** Nothing at all (not even a keep-alive comment) for this long: reconnect. */
  idleMs?: number;
  /** Polling interval when the server has no event stream. */
  pollMs?: number;
  signal?: AbortSignal;
}

export async function getRun(client: GwsClient, runId: string): Promise<AgentRun> {
  // JSON (no Accept: text/event-stream), so the 200 is the run.
  return unwrap(await client.GET('/v1/agent-runs/{run_id}', { params: { path: { run_id: runId } } })) as AgentRun;
}

function parseEvent(data: string): RunEvent | undefined {
  try {
    const value = JSON.parse(data) as RunEvent;
    return value && typeof value.state === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Follows the run and answers it as it ended. `first` is the run as already read, if it was. */
export async function watchRun(client: GwsClient, runId: string, display: RunDisplay, options: WatchOptions = {}, first?: AgentRun): Promise<AgentRun> {
  try {
    return await follow(client, runId, display, options, first);
  } catch (err) {
    display.abort();
    if (options.signal?.aborted) throw new CliError(`stopped watching; run ${runId} goes on: gws runs get ${runId} --watch`, EXIT.interrupted);
    throw err;
  }
}

async function follow(client: GwsClient, runId: string, display: RunDisplay, options: WatchOptions, first?: AgentRun): Promise<AgentRun> {
  const initial = first ?? (await getRun(client, runId));
  display.start(initial);
  // A run takes one approval decision, so what it waits for is shown once: when an event (or the run
  // as first read) says it waits, and the run, read again, still does (a replayed old event may not).
  let approvalShown = false;
  const showApproval = async (known?: AgentRun) => {
    if (approvalShown) return;
    const run = known ?? (await getRun(client, runId)); // events are content-free: the effects come from the run
    if (run.status !== 'awaiting_approval' || run.approval?.state !== 'pending') return;
    approvalShown = true;
    display.approval(run);
  };
  if (!isTerminalState(initial.status)) {
    // What an approval waits for is shown when the stream (which starts with the run's first event)
    // reaches the awaiting_approval event, so it follows the history rather than preceding it.
    let missing = false;
    try {
      await followSse({
        open: async (lastEventId) => {
          const headers: Record<string, string> = { accept: 'text/event-stream' };
          if (lastEventId) headers['last-event-id'] = lastEventId;
          return client.fetch(`/v1/agent-runs/${encodeURIComponent(runId)}/events`, { headers, signal: options.signal });
        },
        onMessage: async (message) => {
          const event = parseEvent(message.data);
          if (!event) return;
          display.event(event);
          if (event.progress?.waiting_for === 'approval') await showApproval();
          if (isTerminalState(event.state)) return 'stop';
        },
        onReconnect: (attempt, delayMs, why) => display.notice(`${why}; reconnecting in ${Math.round(delayMs / 100) / 10} s (attempt ${attempt})`),
        idleMs: options.idleMs ?? 60_000,
        signal: options.signal,
      });
    } catch (err) {
      // A server without the event stream (404 while the run itself is there): poll instead.
      if (!(err instanceof ApiError && err.status === 404)) throw err;
      await getRun(client, runId); // a 404 here is the run's own: report that
      missing = true;
    }
    if (missing) await pollRun(client, runId, display, showApproval, options);
  }
  const final = await getRun(client, runId);
  display.finish(final);
  return final;
}

/** The fallback of a server without GET …/events: read the run every pollMs and show each change as an event. */
async function pollRun(
  client: GwsClient,
  runId: string,
  display: RunDisplay,
  showApproval: (run: AgentRun) => Promise<void>,
  options: WatchOptions,
): Promise<void> {
  let last = '';
  for (;;) {
    if (options.signal?.aborted) throw options.signal.reason;
    const run = await getRun(client, runId);
    const seen = JSON.stringify([run.status, run.progress]);
    if (seen !== last) {
      last = seen;
      display.event({ id: '', kind: `run.${run.status}`, run_id: run.run_id, state: run.status, progress: run.progress, created_at: run.updated_at });
      if (run.progress.waiting_for === 'approval') await showApproval(run);
    }
    if (isTerminalState(run.status)) return;
    await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 1_000));
  }
}
