// Planning on the embedded model, one requested action at a time, inside the request's plan schema
// (domain/agent/exact-plan.ts): the model first chooses what the action becomes among the options
// it is offered, ranked by its own likelihood, then, for a tool with arguments, writes them under a
// grammar of that tool's own (bounded) schema. Every plan is therefore complete and valid by
// construction; what the service narrowed is recorded in the plan's hints.
import { buildableOptions, boundedArguments, maxJsonTokens, toolParameters } from '../../domain/agent/exact-plan.ts';
import { assessPlan, type PlanProposal, proposalOf } from '../../domain/agent/plan-check.ts';
import { ANSWER, type ActionOptions, actionOptions, choiceInstructions, optionPhrase, toolWords, UNRESOLVED } from '../../domain/agent/plan-options.ts';
import { requestSpans, withSpanStrings } from '../../domain/agent/request-spans.ts';
import { argumentProblems } from '../../domain/agent/tool-args.ts';
import type { ChatMessage, ChatRequest } from '../../domain/chat/types.ts';
import { missingMaterialReason, type RequestedAction } from '../../domain/planning/requested-actions.ts';
import { truncate } from '../../domain/text/analyze.ts';
import { estimateTokens } from '../../domain/tokens.ts';
import type { ServerToolCatalog } from '../../domain/tools.ts';
import { type AgentDeps, type CallContext, callModel } from '../model-call.ts';

type PlanCall = CallContext & { input: string; attempt: number };
type Entry = { do: string; arguments?: Record<string, unknown>; purpose?: string; reason?: string };
type Stopped = Extract<PlanProposal, { kind: 'stopped' }>;

/** The longest reason a plan keeps for an unresolved action (the plan schema's bound). */
const PLAN_REASON_MAX = 300;

/** What the plan records of how arguments were written on this model. */
const COPIED_ARGUMENTS = "its tool's text arguments were limited to spans of the request, a path argument to the request's paths";

const request = (c: PlanCall, messages: ChatMessage[], maxTokens: number, schema?: Record<string, unknown>): ChatRequest => ({
  model: c.model,
  messages,
  grounding: { memory: [], document: null },
  responseFormat: schema ? { name: 'arguments', schema } : null,
  maxTokens,
  // Greedy: a retried activity makes the same choice.
  sampling: { temperature: 0 },
});

/** The index of the candidate the model finds likeliest after `messages` (and `prefix`), as one charged call. */
async function likeliest(deps: AgentDeps, c: PlanCall, callKey: string, messages: ChatMessage[], candidates: string[], prefix = ''): Promise<number | Stopped> {
  const worstCase = candidates.reduce((sum, x) => sum + estimateTokens(x) + 8, estimateTokens(prefix));
  const called = await callModel(deps, c, callKey, request(c, messages, worstCase), [], async (provider, signal) => {
    if (!provider.rank) throw new Error('this provider cannot rank choices');
    const ranked = await provider.rank({ messages, candidates, prefix }, signal);
    return { content: JSON.stringify(ranked.scores), refusal: null, finishReason: 'stop', usage: ranked.usage };
  });
  if (called.kind === 'stopped') return called;
  const scores = JSON.parse(called.output.content ?? '[]') as number[];
  let best = 0;
  scores.forEach((s, i) => {
    if (s > scores[best]!) best = i;
  });
  return best;
}

/** The option the model finds likeliest for the action; an action with one option takes it without a call. */
async function choose(deps: AgentDeps, c: PlanCall, action: RequestedAction, options: string[], serverTools: ServerToolCatalog): Promise<string | Stopped> {
  if (options.length === 1) return options[0]!;
  const messages: ChatMessage[] = [
    { role: 'system', content: choiceInstructions(options, serverTools) },
    { role: 'user', content: `Request: ${action.clause}` },
  ];
  const candidates = options.map((o) => optionPhrase(o, serverTools));
  const best = await likeliest(deps, c, `plan:${c.attempt}:choose:${action.n}`, messages, candidates);
  return typeof best === 'number' ? options[best]! : best;
}

/**
 * The tool's arguments as the model writes them under the grammar of the tool's bounded schema, its
 * text copied from the request (request-spans.ts); none to write: {}.
 */
async function fill(deps: AgentDeps, c: PlanCall, action: RequestedAction, tool: string, serverTools: ServerToolCatalog): Promise<Entry | Stopped> {
  const bounded = boundedArguments(toolParameters(tool, serverTools))!;
  if (bounded.type === 'object' && Object.keys(bounded.properties as object).length === 0) return { do: tool, arguments: {} };
  const description = serverTools[tool]?.description ?? '';
  const messages: ChatMessage[] = [
    {
      role: 'system',
      content: `Write the arguments for the tool "${toolWords(tool, serverTools)}" as JSON. ${truncate(description, 300)} Take every value from the request, exactly as it is written there.`,
    },
    { role: 'user', content: `Request: ${c.input}` },
  ];
  // Written under the grammar of the tool's schema, its text limited to spans of the request.
  const schema = withSpanStrings(bounded, requestSpans(c.input));
  if (!schema) return { do: UNRESOLVED, reason: `the request states no value for an argument ${tool} requires` };
  const called = await callModel(deps, c, `plan:${c.attempt}:arguments:${action.n}`, request(c, messages, maxJsonTokens(schema), schema), []);
  if (called.kind === 'stopped') return called;
  let args: unknown;
  try {
    args = JSON.parse(called.output.content ?? '');
  } catch {
    return { do: UNRESOLVED, reason: `the model's arguments for ${tool} were cut off; nothing will be run for it` };
  }
  return checked(tool, { do: tool, arguments: args as Record<string, unknown> }, serverTools);
}

/** The entry as it is when its arguments fit the tool's own schema; otherwise unresolved, saying why. */
function checked(tool: string, entry: Entry | Stopped, serverTools: ServerToolCatalog): Entry | Stopped {
  if ('kind' in entry || entry.do !== tool) return entry;
  const problem = argumentProblems(tool, entry.arguments, serverTools);
  return problem ? { do: UNRESOLVED, reason: `the model's arguments for ${tool} do not fit its schema (${truncate(problem, 120)})` } : entry;
}

/** Why an action is unresolved: the only option it had, or the model's choice. */
function unresolvedReason(o: ActionOptions, action: RequestedAction): string {
  if (action.missing) return truncate(missingMaterialReason(action), PLAN_REASON_MAX);
  if (o.options.length === 1) return truncate(o.narrowed ?? 'no tool offered to this run can do it', PLAN_REASON_MAX);
  return 'the model chose this over every tool it was offered: no offered tool does it';
}

/** One entry of the plan for one action. */
async function entryFor(deps: AgentDeps, c: PlanCall, action: RequestedAction, o: ActionOptions, serverTools: ServerToolCatalog): Promise<Entry | Stopped> {
  const choice = await choose(deps, c, action, o.options, serverTools);
  if (typeof choice !== 'string') return choice;
  if (choice === ANSWER) return { do: ANSWER };
  if (choice === UNRESOLVED) return { do: UNRESOLVED, reason: unresolvedReason(o, action) };
  const filled = await fill(deps, c, action, choice, serverTools);
  if ('kind' in filled) return filled;
  return filled.do === UNRESOLVED ? filled : { ...filled, purpose: `${toolWords(choice, serverTools)}: action ${action.n}, "${truncate(action.clause, 120)}"` };
}

/** A plan chosen action by action; the service then runs its steps as planned (Plan.execution 'steps'). */
export async function planByChoice(deps: AgentDeps, c: PlanCall, actions: RequestedAction[], serverTools: ServerToolCatalog): Promise<PlanProposal> {
  const options = buildableOptions(actionOptions(actions, serverTools, true), serverTools);
  const entries: Record<string, Entry> = {};
  for (const o of options) {
    const entry = await entryFor(deps, c, actions[o.action - 1]!, o, serverTools);
    if ('kind' in entry) return entry;
    entries[`action_${o.action}`] = entry;
  }
  const proposal = proposalOf(assessPlan(JSON.stringify(entries), actions, serverTools, options), true, serverTools);
  if (proposal.kind !== 'planned') return proposal;
  // Every action's options, and everything deterministic that shaped them, so a reader sees what the model chose among.
  const withTool = new Set(proposal.plan.steps.flatMap((s) => s.covers ?? []));
  const hints = options.map((o) => {
    const a = actions[o.action - 1]!;
    const read = `the request reads as ${a.kind === 'unsupported' ? 'an effect' : a.kind === 'delivery' ? 'a delivery' : 'analysis'}${a.verb ? ` ("${a.verb}")` : ''}, which decides the built-in options`;
    return { action: o.action, offered: o.options, why: [read, o.narrowed, withTool.has(o.action) ? COPIED_ARGUMENTS : null].filter(Boolean).join('; ') };
  });
  return { kind: 'planned', plan: { ...proposal.plan, execution: 'steps', choice: 'ranked', hints } };
}
