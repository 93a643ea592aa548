// Which of a model's tool calls the service runs. Pure and deterministic, so
// the workflow decides it: an external effect runs only as a step of the plan
// a person approved, once; read-only tools run as their planned step or as
// an extra read; anything else is refused and stays unresolved.
import type { PlanStep } from '../planning/plan.ts';
import { effectOf, isToolId, type ServerToolCatalog } from '../tools.ts';

/** A model's tool call after the activity parsed and validated its arguments. */
export interface ProposedCall {
  id: string;
  name: string;
  arguments: Record<string, unknown> | null;
  /** Why the arguments are unusable (not JSON, or not valid for the tool's schema). */
  problem: string | null;
  /** digestOf(arguments), computed by the activity (the workflow computes no hashes). */
  digest?: string | null;
}

export type Admission = { admitted: true; step: PlanStep } | { admitted: false; tool: string | null; stepId: string; reason: string };

/** What a tool works on, from its arguments. */
export function scopeOf(tool: string, args: Record<string, unknown>): string {
  if (tool === 'memory_recall') return String(args.query ?? '');
  if (tool === 'text_analysis') return String(args.text ?? '');
  if (!isToolId(tool)) return tool;
  return 'result';
}

export function admitCall(
  call: ProposedCall,
  context: { plan: PlanStep[]; used: ReadonlySet<string>; callsSoFar: number; maxToolCalls: number; ref: string; serverTools?: ServerToolCatalog },
): Admission {
  const serverTools = context.serverTools ?? {};
  const refuse = (tool: string | null, reason: string): Admission => ({ admitted: false, tool, stepId: context.ref, reason });
  if (!isToolId(call.name) && !Object.hasOwn(serverTools, call.name))
    return refuse(null, `The model asked for "${call.name.slice(0, 64)}", which is not a tool of the catalog.`);
  const tool = call.name;
  const effect = effectOf(tool, serverTools) ?? 'external';
  if (call.problem || !call.arguments) return refuse(tool, `Invalid arguments for ${tool}: ${call.problem ?? 'missing'}.`);
  if (context.callsSoFar >= context.maxToolCalls) return refuse(tool, `The run reached its limit of ${context.maxToolCalls} tool calls.`);
  const open = context.plan.filter((s) => s.tool === tool && !context.used.has(s.id));
  if (effect === 'external') {
    if (open.length === 0) return refuse(tool, `${tool} is an external effect and no approved step of the plan is left for it; nothing was sent.`);
    // A built-in delivery sends the approved message; only one that sends an earlier action's result
    // (message_from) takes the model's text of that result from its call.
    if (isToolId(tool)) {
      const step = open[0]!;
      if (step.message_from === undefined && step.arguments !== undefined) return { admitted: true, step: { ...step, effect } };
      return { admitted: true, step: { ...step, effect, scope: scopeOf(tool, call.arguments), arguments: call.arguments } };
    }
    // A server tool's external step runs exactly the call that was approved (as edited at approval, if it
    // was): the model may ask for it with the arguments it proposed or the approved ones, nothing else.
    const digest = call.digest ?? null;
    const approved = digest === null ? undefined : open.find((s) => s.args_digest === digest || s.proposed_digest === digest);
    if (!approved) return refuse(tool, `These arguments for ${tool} are not the ones approved (digest ${digest}); nothing was sent.`);
    return { admitted: true, step: { ...approved, effect } };
  }
  const planned = open[0];
  const base = planned ?? { id: context.ref, tool, effect, purpose: 'An extra read the model asked for', covers: [] };
  return { admitted: true, step: { ...base, effect, scope: scopeOf(tool, call.arguments), arguments: call.arguments } };
}
