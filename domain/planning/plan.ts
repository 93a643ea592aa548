import type { EffectClass, ServerToolCatalog } from '../tools.ts';
import { type RequestedAction, requestedActions } from './requested-actions.ts';

export interface PlanStep {
  /** step_1, step_2, … in execution order. */
  id: string;
  /** A built-in tool (ToolId) or a server tool (`<server>__<tool>`, in the plan's serverTools). */
  tool: string;
  /** Always the catalog's effect class for `tool`, whatever a planner said. */
  effect: EffectClass;
  /** Why the step exists, in words a reviewer can approve or reject. */
  purpose: string;
  /** What the step works on: a part of the input, or a recall query. */
  scope: string;
  /** The requested actions (RequestedAction.n) this step carries out. */
  covers?: number[];
  /** Tool arguments, for steps planned by a model (validated against the catalog's JSON Schema). */
  arguments?: Record<string, unknown>;
  /** SHA-256 digest of the canonical arguments: what an approval of an external step binds to. */
  args_digest?: string;
  /** When a person edited the arguments at approval: the digest of the arguments the model proposed. */
  proposed_digest?: string;
  /**
   * webhook_delivery with no message of its own: the requested action whose result it sends (that
   * action's answer, written after approval). The approval names it; an edited message replaces it.
   */
  message_from?: number;
  /** Tool-calling runs: the id of the model's tool call this step is (reports cite it). */
  call_id?: string;
  /** Tool-calling runs: the approval round that decided this external step, and how. */
  round?: number;
  decision?: 'approved' | 'rejected';
  /** Tool-calling runs: who approved this step in its round (the approver key and its person, or `temporal`). */
  approved_by?: { key_id: string | null; name: string }[];
}

/** A requested action the planner could not cover, and why. */
export interface PlanGap {
  action: number;
  reason: string;
}

/** What the service narrowed before the model chose for an action: the choices it offered, and why fewer than all. */
export interface PlanHint {
  action: number;
  offered: string[];
  why: string;
}

export interface Plan {
  planner: string;
  /**
   * The requested actions as read when the plan was made. Execution, verification and receipts read
   * them from here, never again from the input with whatever code runs later (a deploy between
   * planning and verification must not renumber or reclassify them). Absent in plans made before.
   */
  actions?: RequestedAction[];
  /**
   * 'steps': the service runs the approved steps as planned, in order, and the model writes only its
   * answer parts (the embedded model's plans, which fix every step's tool and arguments). Absent: the
   * model carries the plan out through tool calls, turn by turn (upstream).
   */
  execution?: 'steps';
  /** Deterministic narrowing the planner used, per action; absent when the model saw every choice. */
  hints?: PlanHint[];
  /** How the model chose: 'ranked' (each option scored by the model's likelihood) or absent (generated). */
  choice?: 'ranked';
  steps: PlanStep[];
  /**
   * Requested actions the model said it performs in its final answer (analysis of the given text).
   * Each counts as performed only when the answer has a specific part for that very action.
   */
  answer?: number[];
  /** Requested actions no step covers; verification lists every one of them as unresolved. */
  gaps?: PlanGap[];
  /** The tenant's server tools offered to the model when it planned, as the operator classified them then. */
  serverTools?: ServerToolCatalog;
  /**
   * 'tool_calls': the model planned and acted with tool calls over the whole catalog (docs/runs.md, "The
   * tool-calling protocol"); `steps` are the calls it made, in order, reads (call_N) and external calls
   * (step_N) alike, and the request is accounted for by the model's report. Absent: plans made before.
   */
  protocol?: 'tool_calls';
  /** Tool-calling runs: the tools of the catalog the model was not shown (a catalog larger than one request takes). */
  not_shown?: string[];
}

/** Turns a run's input into a bounded plan. The default is the local deterministic planner. */
export interface PlanningProvider {
  readonly name: string;
  plan(request: { input: string; memory: boolean }): Promise<Plan>;
}

/** A plan's requested actions: as recorded when it was made; read from the input only for plans made before they were recorded. */
export function actionsOf(plan: Pick<Plan, 'actions'> | null | undefined, input: string): RequestedAction[] {
  return plan?.actions ?? requestedActions(input);
}
