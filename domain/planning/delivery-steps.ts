// What each delivery step of a plan sends, fixed by the service, not by a planner: the message the
// request gives, copied from it, or the result of the earlier action the request names ("summarise …
// and send it"). A model may propose a message; the request's own words replace it, so what a person
// approves is what the request asked to send (issue 49).
import { digestOf } from '../digest.ts';
import type { Plan, PlanStep } from './plan.ts';
import type { RequestedAction } from './requested-actions.ts';

/** The delivery step with its message: its own argument, or the action its result comes from. */
function withMessage(step: PlanStep, actions: RequestedAction[]): PlanStep {
  const action = actions.find((a) => (step.covers ?? []).includes(a.n) && a.kind === 'delivery');
  const { message_from: _, ...rest } = step;
  if (action?.message !== undefined) {
    const args = { message: action.message };
    return { ...rest, arguments: args, args_digest: digestOf(args) };
  }
  const args = {};
  const from = action?.messageFrom;
  return { ...rest, arguments: args, args_digest: digestOf(args), ...(from !== undefined ? { message_from: from } : {}) };
}

/** The plan with every webhook_delivery step's message fixed from its requested action. */
export function withDeliveryMessages(plan: Plan, actions: RequestedAction[]): Plan {
  return { ...plan, actions, steps: plan.steps.map((s) => (s.tool === 'webhook_delivery' ? withMessage(s, actions) : s)) };
}

/** The text a delivery step sends: its (approved) message, else the answer to the action it sends the result of; null when there is none. */
export function deliveryMessage(step: PlanStep, answers: { action: number; status: string; result?: string }[] = []): string | null {
  const own = step.arguments?.message;
  if (typeof own === 'string' && own.trim()) return own;
  if (step.message_from === undefined) return null;
  const part = answers.find((p) => p.action === step.message_from && p.status === 'performed');
  return part?.result?.trim() ? part.result : null;
}
