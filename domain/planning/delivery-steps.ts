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
  // The plan records the actions as read; `scope` (the whole input again) served the choice of tools and stays out of it.
  const recorded = actions.map(({ scope: _, ...a }) => a);
  return { ...plan, actions: recorded, steps: plan.steps.map((s) => (s.tool === 'webhook_delivery' ? withMessage(s, actions) : s)) };
}

/** The text a delivery step sends: its (approved) message, else the answer to the action it sends the result of; null when there is none. */
export function deliveryMessage(step: PlanStep, answers: { action: number; status: string; result?: string }[] = []): string | null {
  const own = step.arguments?.message;
  if (typeof own === 'string' && own.trim()) return own;
  if (step.message_from === undefined) return null;
  const part = answers.find((p) => p.action === step.message_from && p.status === 'performed');
  return part?.result?.trim() ? part.result : null;
}

/**
 * The plan with each delivery that sends an earlier action's result carrying that result as its
 * message (its digest what the approval binds to), once the answers were written before the approval
 * wait. A delivery whose source action was not performed has nothing to send: it leaves the plan, a
 * gap saying why, so no one is asked to approve an empty message.
 */
export function withAnsweredMessages(plan: Plan, parts: { action: number; status: string; result?: string }[]): Plan {
  const gaps = [...(plan.gaps ?? [])];
  const steps = plan.steps.flatMap((s) => {
    if (s.tool !== 'webhook_delivery' || s.message_from === undefined || typeof s.arguments?.message === 'string') return [s];
    const from = s.message_from;
    const part = parts.find((p) => p.action === from && p.status === 'performed' && p.result?.trim());
    if (!part) {
      for (const n of s.covers ?? [])
        gaps.push({ action: n, reason: `its message was to be the result of action ${from}, which was not performed; nothing was sent` });
      return [];
    }
    const args = { message: part.result! };
    return [{ ...s, arguments: args, args_digest: digestOf(args) }];
  });
  return { ...plan, steps, gaps };
}
