// Which of a model's tool calls the service runs. Pure and deterministic, so
// the workflow decides it: an external effect runs only as a step of the plan
// a person approved, once; read-only tools run as their planned step or as
// an extra read; anything else is refused and stays unresolved.
import type { PlanStep } from '../planning/plan.ts';
import { isToolId, TOOLS, type ToolId } from '../tools.ts';

/** A model's tool call after the activity parsed and validated its arguments. */
export interface ProposedCall {
  id: string;
  name: string;
  arguments: Record<string, unknown> | null;
  /** Why the arguments are unusable (not JSON, or not valid for the tool's schema). */
  problem: string | null;
}

export type Admission = { admitted: true; step: PlanStep } | { admitted: false; tool: ToolId | null; stepId: string; reason: string };

/** What a tool works on, from its arguments. */
export function scopeOf(tool: ToolId, args: Record<string, unknown>): string {
  if (tool === 'memory_recall') return String(args.query ?? '');
  if (tool === 'text_analysis') return String(args.text ?? '');
  return 'result';
}

export function admitCall(
  call: ProposedCall,
  context: { plan: PlanStep[]; used: ReadonlySet<string>; callsSoFar: number; maxToolCalls: number; ref: string },
): Admission {
  const refuse = (tool: ToolId | null, reason: string): Admission => ({ admitted: false, tool, stepId: context.ref, reason });
  if (!isToolId(call.name)) return refuse(null, `The model asked for "${call.name.slice(0, 64)}", which is not a tool of the catalog.`);
  const tool = call.name;
  if (call.problem || !call.arguments) return refuse(tool, `Invalid arguments for ${tool}: ${call.problem ?? 'missing'}.`);
  if (context.callsSoFar >= context.maxToolCalls) return refuse(tool, `The run reached its limit of ${context.maxToolCalls} tool calls.`);
  const planned = context.plan.find((s) => s.tool === tool && !context.used.has(s.id));
  if (TOOLS[tool].effect === 'external' && !planned) {
    return refuse(tool, `${tool} is an external effect and no approved step of the plan is left for it; nothing was sent.`);
  }
  const base = planned ?? { id: context.ref, tool, effect: TOOLS[tool].effect, purpose: 'An extra read the model asked for', covers: [] };
  return { admitted: true, step: { ...base, effect: TOOLS[tool].effect, scope: scopeOf(tool, call.arguments), arguments: call.arguments } };
}
