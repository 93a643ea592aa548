// The wire states of a durable run and the transitions between them. Pure, so
// the workflow, the API and the OpenAPI description share one definition.

export const RUN_STATES = ['accepted', 'planning', 'awaiting_approval', 'executing', 'verifying', 'completed', 'failed', 'needs_attention'] as const;
export type RunStatus = (typeof RUN_STATES)[number];

export const TERMINAL_STATES: readonly RunStatus[] = ['completed', 'failed', 'needs_attention'];

export function isTerminal(status: string): boolean {
  return (TERMINAL_STATES as readonly string[]).includes(status);
}

/** The workflow steps, in order; `current_step` names one of them. */
export const RUN_STEPS = ['estimate', 'reserve', 'plan', 'approval', 'execute', 'verify', 'settle'] as const;
export type RunStep = (typeof RUN_STEPS)[number];

export const TRANSITION_GRAPH = `accepted -> planning            (estimate, reserve and plan run here)
planning -> awaiting_approval    (the plan has an external effect)
planning -> executing            (read-only plan)
awaiting_approval -> executing   (approved)
awaiting_approval -> failed      (rejected, or cancelled)
awaiting_approval -> needs_attention (approval deadline passed)
executing -> verifying
verifying -> completed           (nothing unresolved)
verifying -> needs_attention     (an unresolved remainder)
planning -> needs_attention      (balance or budget cannot cover the estimate)
any non-terminal -> failed       (cancelled, or an unrecoverable error)`;
