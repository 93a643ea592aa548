// A run's progress as the API, its event stream and the Temporal UI show it.
// Content-free: counts, step names and plan step ids only.
import type { RunStatus, RunStep } from './states.ts';

export interface RunProgress {
  state: RunStatus;
  /** Plan steps finished (done, failed or refused alike). */
  steps_done: number;
  /** Plan steps in the plan; 0 until the plan exists. */
  steps_total: number;
  /** The workflow step (estimate … settle); null once the run ended. */
  current_step: RunStep | null;
  /** The plan step id being run while executing (s1, s2, …), else null. */
  current_plan_step: string | null;
  /** What the run waits for: a person's approval, or nothing. */
  waiting_for: 'approval' | null;
}

/** The completion-notification event types a tenant can subscribe an endpoint to. */
export const NOTIFICATION_EVENTS = ['run.awaiting_approval', 'run.completed', 'run.failed', 'run.needs_attention'] as const;
export type NotificationEvent = (typeof NOTIFICATION_EVENTS)[number];
