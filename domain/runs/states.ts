// The wire states of a durable run and the one table of moves between them. Pure, so
// the workflow (which moves only by it), the projection (which refuses any other move),
// the API and the OpenAPI description share one definition.

export const RUN_STATES = ['accepted', 'planning', 'awaiting_approval', 'executing', 'verifying', 'completed', 'failed', 'needs_attention'] as const;
export type RunStatus = (typeof RUN_STATES)[number];

export const TERMINAL_STATES: readonly RunStatus[] = ['completed', 'failed', 'needs_attention'];

/** Whether a recorded value (a row's text, an event's state) is one of the run states. */
export const isRunStatus = (v: unknown): v is RunStatus => typeof v === 'string' && (RUN_STATES as readonly string[]).includes(v);

export function isTerminal(status: string): boolean {
  return (TERMINAL_STATES as readonly string[]).includes(status);
}

/** The workflow steps, in order; `current_step` names one of them. */
export const RUN_STEPS = ['estimate', 'reserve', 'plan', 'approval', 'execute', 'verify', 'settle'] as const;
export type RunStep = (typeof RUN_STEPS)[number];

/**
 * What moves a run from one state to the next. `advance` is a new step within the same state
 * (reserve, then plan, within planning); the others name why the state changes.
 */
export const RUN_EVENTS = ['accept', 'begin', 'advance', 'needs_approval', 'execute', 'verify', 'complete', 'unresolved', 'fail'] as const;
export type RunEvent = (typeof RUN_EVENTS)[number];

/**
 * The run's state machine, state × event → state: the one table the workflow moves by and the
 * projection checks every write against. An event missing from a state's row is an illegal move.
 */
export const RUN_TRANSITIONS: Readonly<Record<RunStatus, Readonly<Partial<Record<RunEvent, RunStatus>>>>> = {
  // The workflow's first record; the API (a run cancelled before its workflow started) and the reconciler fail it.
  accepted: { accept: 'accepted', begin: 'planning', fail: 'failed' },
  // Estimate, reserve and plan run here; a balance or budget that cannot cover the estimate, or an empty model plan, is unresolved.
  planning: { advance: 'planning', needs_approval: 'awaiting_approval', execute: 'executing', unresolved: 'needs_attention', fail: 'failed' },
  // Approved: execute; the deadline passed: unresolved; rejected or cancelled: fail.
  awaiting_approval: { advance: 'awaiting_approval', execute: 'executing', unresolved: 'needs_attention', fail: 'failed' },
  // A tool-calling run whose model asks for further external calls after seeing results waits for another approval round.
  executing: { advance: 'executing', needs_approval: 'awaiting_approval', verify: 'verifying', fail: 'failed' },
  // Verify, then settle: completed when nothing is unresolved.
  verifying: { advance: 'verifying', complete: 'completed', unresolved: 'needs_attention', fail: 'failed' },
  completed: {},
  failed: {},
  needs_attention: {},
};

/** The state `event` moves a run in `from` to, or null when the table has no such move. */
export function nextStatus(from: RunStatus, event: RunEvent): RunStatus | null {
  return RUN_TRANSITIONS[from][event] ?? null;
}

/** The event that moves `from` to `to`, or null when no event does: the move is illegal. */
export function eventBetween(from: RunStatus, to: RunStatus): RunEvent | null {
  const row = RUN_TRANSITIONS[from];
  return (Object.keys(row) as RunEvent[]).find((event) => row[event] === to) ?? null;
}

/** Every state from which some event leads to `to`: where the projection may write `to` over. */
export function statesLeadingTo(to: RunStatus): RunStatus[] {
  return RUN_STATES.filter((from) => eventBetween(from, to) !== null);
}

/** The table in words, one line per move (the OpenAPI description of RunStatus shows it). */
export const TRANSITION_GRAPH = RUN_STATES.flatMap((from) =>
  (Object.entries(RUN_TRANSITIONS[from]) as [RunEvent, RunStatus][]).filter(([, to]) => to !== from).map(([event, to]) => `${from} -> ${to}   (${event})`),
).join('\n');
