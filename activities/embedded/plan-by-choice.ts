// Planning on the embedded model, one requested action at a time, inside the request's plan schema
// (domain/agent/exact-plan.ts): the model first chooses what the action becomes among the options
// it is offered, ranked by its own likelihood, then, for a tool with arguments, writes them under a
// grammar of that tool's own (bounded) schema. Every plan is therefore complete and valid by
// construction; what the service narrowed is recorded in the plan's hints.
import { buildableOptions, boundedArguments, maxJsonTokens, toolParameters } from '../../domain/agent/exact-plan.ts';
import { FOLDER_WORDS, wordsOfName } from '../../domain/agent/catalog-fit.ts';
import { assessPlan, type PlanProposal, proposalOf } from '../../domain/agent/plan-check.ts';
import { ANSWER, type ActionOptions, actionOptions, choiceInstructions, optionPhrase, toolWords, UNRESOLVED } from '../../domain/agent/plan-options.ts';
import { namesPath, requestSpans, takesPath, withoutFolders, withSpanStrings } from '../../domain/agent/request-spans.ts';
import { argumentProblems } from '../../domain/agent/tool-args.ts';
import type { ChatMessage, ChatRequest } from '../../domain/chat/types.ts';
import { missingMaterialReason, type RequestedAction } from '../../domain/planning/requested-actions.ts';
import { sentencesOf, truncate } from '../../domain/text/analyze.ts';
import { contactDetailsIn } from '../../domain/text/find-in-text.ts';
import type { ServerToolCatalog } from '../../domain/tools.ts';
import { type AgentDeps, type CallContext, callModel } from '../model-call.ts';
import { givesText, isQuestion } from './answer-part.ts';
import { addsToFile, writesWholeText } from './adds-to-file.ts';
import { admitsBuiltin } from './admits-builtin.ts';
import { callsFolder, worksOnFileText } from './called-folder.ts';
import { asksFigure } from './asks-figure.ts';
import { madePaths, withPathOrder } from './path-order.ts';
import { leader, rankScores } from './rank.ts';
import { repeatedValue } from './repeated-values.ts';
import { conversionOf, convertsTime, withTimeZones } from './time-zones.ts';
import { needsStronger } from '../../domain/planning/needs-stronger.js';

type PlanCall = CallContext & { input: string; attempt: number; memory?: boolean };
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

/** The candidate the model finds likeliest after `messages`, and its lead over the next one. */
async function likeliest(
  deps: AgentDeps,
  c: PlanCall,
  callKey: string,
  messages: ChatMessage[],
  candidates: string[],
): Promise<{ best: number; lead: number } | Stopped> {
  const scores = await rankScores(deps, c, callKey, messages, candidates);
  return 'kind' in scores ? scores : leader(scores);
}

type Choice = { option: string; lead: number | null };

/** The option the model finds likeliest for the action, with its lead; an action with one option takes it without a call. */
async function choose(deps: AgentDeps, c: PlanCall, action: RequestedAction, options: string[], serverTools: ServerToolCatalog): Promise<Choice | Stopped> {
  if (options.length === 1) return { option: options[0]!, lead: null };
  const messages: ChatMessage[] = [
    { role: 'system', content: choiceInstructions(options, serverTools) },
    { role: 'user', content: `Request: ${action.clause}` },
  ];
  const candidates = options.map((o) => optionPhrase(o, serverTools));
  const ranked = await likeliest(deps, c, `plan:${c.attempt}:choose:${action.n}`, messages, candidates);
  return 'kind' in ranked ? ranked : { option: options[ranked.best]!, lead: ranked.lead };
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
  // Written under the grammar of the tool's schema, its text limited to spans of the request, a time zone to one its sentence names.
  // A read of one file ("read_file", not "list_directory") reads a file the request names, not the folder it is in.
  // A tool that makes something ("create_directory", "write_file") makes the new path, not the folder it goes in.
  const sentence = sentencesOf(c.input)[action.sentence] ?? action.clause;
  const names = wordsOfName(serverTools[tool]?.tool ?? tool);
  const spans = readsOneFile(tool, serverTools)
    ? withoutFolders(requestSpans(c.input))
    : makesSomething(tool, serverTools)
      ? madePaths(
          requestSpans(c.input),
          sentence,
          names.some((w) => FOLDER_WORDS.has(w)),
        )
      : requestSpans(c.input);
  const spanned = withSpanStrings(bounded, spans);
  const zoned = spanned && withTimeZones(spanned, sentence, conversionOf(c.input, action));
  // A move, copy or rename takes the two paths of its own clause in the order written.
  const moves = names.some((w) => ['move', 'copy', 'rename'].includes(w));
  if (!zoned) return { do: UNRESOLVED, reason: `the request states no value for an argument ${tool} requires` };
  const schema = moves ? withPathOrder(zoned, action.clause) : zoned;
  if (!schema) return { do: UNRESOLVED, reason: needsStronger(`it names not one path to move and one to move it to, which one call of ${tool} takes`) };
  const called = await callModel(deps, c, `plan:${c.attempt}:arguments:${action.n}`, request(c, messages, maxJsonTokens(schema), schema), []);
  if (called.kind === 'stopped') return called;
  let args: unknown;
  try {
    args = JSON.parse(called.output.content ?? '');
  } catch {
    return { do: UNRESOLVED, reason: `the model's arguments for ${tool} were cut off; nothing will be run for it` };
  }
  const repeated = repeatedValue(args);
  if (repeated !== null)
    return {
      do: UNRESOLVED,
      reason: needsStronger(`the small model gave ${tool} "${truncate(repeated, 40)}" twice`),
    };
  return checked(tool, { do: tool, arguments: args as Record<string, unknown> }, serverTools);
}

/** An external tool whose name's first word makes something ("create_directory", "write_file", "mkdir"). */
function makesSomething(tool: string, serverTools: ServerToolCatalog): boolean {
  const ref = serverTools[tool];
  return ref?.effect === 'external' && ['create', 'make', 'write', 'mkdir', 'new'].includes(wordsOfName(ref.tool)[0] ?? '');
}

/** A read the operator classified, named for files and not for folders ("read_text_file", "get_file_info"). */
function readsOneFile(tool: string, serverTools: ServerToolCatalog): boolean {
  const ref = serverTools[tool];
  if (ref?.effect !== 'read') return false;
  const names = wordsOfName(ref.tool);
  // A search or a listing takes where to look, a folder.
  return names.some((w) => w === 'file' || w === 'files') && !names.some((w) => FOLDER_WORDS.has(w) || ['search', 'find', 'list'].includes(w));
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

/**
 * The least lead, in log-likelihood, a tool must have over the next option for the small model's choice
 * to stand; below it the action is unresolved. Calibrated on the fresh eval's tuning half (docs/models.md).
 */
const MIN_TOOL_LEAD = 2;

/** Why the small model's choice of an external tool is not kept; null when it stands. */
function externalDoubt(c: PlanCall, action: RequestedAction, tool: string, lead: number | null, serverTools: ServerToolCatalog): string | null {
  if (serverTools[tool]?.effect !== 'external') return null;
  if (lead !== null && lead < MIN_TOOL_LEAD)
    return needsStronger(`the small model chose ${tool} by too narrow a lead over the next option to be trusted with it`);
  // Adding to what a file holds with a tool that writes a file's whole text would replace what it held.
  if (addsToFile(action.clause) && writesWholeText(serverTools[tool]?.parameters))
    return needsStronger(`it adds to what a file holds, and ${tool} writes a file's whole text, which the small model cannot carry over`);
  // A change to a path the action's sentence names ("We don't need a.txt anymore, delete it") needs a tool that takes a path.
  if (namesPath(sentencesOf(c.input)[action.sentence] ?? action.clause) && !takesPath(serverTools[tool]?.parameters))
    return needsStronger(`it names a path, and ${tool}, the small model's choice, takes none; no tool was chosen that can act on it`);
  return null;
}

/**
 * The catalog's read tools that convert a time between two zones, for an action that asks a
 * conversion the request states (time-zones.ts): however much text the request gives, such a tool
 * is what answers it.
 */
function conversionTools(c: PlanCall, action: RequestedAction, serverTools: ServerToolCatalog): string[] {
  const asks = isQuestion(action) || asksFigure(action) || /^(?:please\s+)?(?:give|tell|show) me\b/i.test(action.clause.trim());
  if (action.kind !== 'analysis' || action.missing || !asks || !conversionOf(c.input, action)) return [];
  return Object.keys(serverTools).filter((t) => serverTools[t]!.effect === 'read' && convertsTime(serverTools[t]!.parameters));
}

/**
 * A question with nothing to answer it from but what a read returns: no text given, no figure to work out.
 * Recalled tenant memory is none either: the answer to a question is a line a server tool read (answer-part.ts).
 */
const readsOnly = (c: PlanCall, action: RequestedAction) => isQuestion(action) && !givesText(c.input) && !asksFigure(action);

/**
 * The options the model chooses among: a question with nothing to answer it from but what a read
 * returns (no text given, no figure to work out) is not offered an answer
 * of the model's own, which could only end unresolved; it chooses among the reads.
 */
function offered(c: PlanCall, action: RequestedAction, options: string[], serverTools: ServerToolCatalog): string[] {
  const converting = conversionTools(c, action, serverTools);
  // A time the request states, to convert to a place the action names: the read tools that convert it, not the model's own answer.
  if (converting.length) return [...converting, UNRESOLVED];
  // find_contact_details reads the request's own text: one that holds no contact detail ("look up Ana's phone
  // number in our contacts graph") it cannot answer, whatever its words ask for.
  const details = contactDetailsIn(c.input);
  const findable = details.emails.length + details.urls.length + details.phones.length > 0;
  const folder = callsFolder(action.scope ?? action.clause);
  const fit = options.filter((x) => (findable || x !== 'find_contact_details') && !(folder && serverTools[x] && worksOnFileText(serverTools[x])));
  return readsOnly(c, action) && fit.some((x) => serverTools[x]?.effect === 'read') ? fit.filter((x) => x !== ANSWER) : fit;
}

/** Each action's options, narrowed once, so the model ranks and the plan's hints list the same ones. */
export function rankedOptions(c: PlanCall, actions: RequestedAction[], serverTools: ServerToolCatalog): ActionOptions[] {
  // Statements alone ("It should be in the knowledge graph.") give nothing this model answers a question
  // from (answer-part.ts answers only from quoted or introduced text), so they do not keep the catalog's
  // reads from it; the numbers of a figure to work out ("We had 80 sign-ups …") are its material all the same.
  const fitted = actions.map(({ given, ...a }) => (readsOnly(c, a) ? a : { ...a, ...(given ? { given } : {}) }));
  return buildableOptions(actionOptions(fitted, serverTools, true, admitsBuiltin(c.input, actions)), serverTools).map((o) => ({
    ...o,
    options: offered(c, actions[o.action - 1]!, o.options, serverTools),
  }));
}

/** One entry of the plan for one action. */
async function entryFor(
  deps: AgentDeps,
  c: PlanCall,
  action: RequestedAction,
  o: ActionOptions,
  serverTools: ServerToolCatalog,
  leads: Map<number, number>,
): Promise<Entry | Stopped> {
  const chosen = await choose(deps, c, action, o.options, serverTools);
  if ('kind' in chosen) return chosen;
  const choice = chosen.option;
  if (chosen.lead !== null) leads.set(action.n, chosen.lead);
  if (choice === ANSWER) return { do: ANSWER };
  const doubt = choice === UNRESOLVED ? null : externalDoubt(c, action, choice, chosen.lead, serverTools);
  if (doubt) return { do: UNRESOLVED, reason: truncate(doubt, PLAN_REASON_MAX) };
  if (choice === UNRESOLVED) return { do: UNRESOLVED, reason: unresolvedReason(o, action) };
  const filled = await fill(deps, c, action, choice, serverTools);
  if ('kind' in filled) return filled;
  return filled.do === UNRESOLVED ? filled : { ...filled, purpose: `${toolWords(choice, serverTools)}: action ${action.n}, "${truncate(action.clause, 120)}"` };
}

/** A plan chosen action by action; the service then runs its steps as planned (Plan.execution 'steps'). */
export async function planByChoice(deps: AgentDeps, c: PlanCall, actions: RequestedAction[], serverTools: ServerToolCatalog): Promise<PlanProposal> {
  const options = rankedOptions(c, actions, serverTools);
  const entries: Record<string, Entry> = {};
  const leads = new Map<number, number>();
  for (const o of options) {
    const entry = await entryFor(deps, c, actions[o.action - 1]!, o, serverTools, leads);
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
    const lead = leads.get(o.action);
    const led = lead === undefined ? null : `the model's choice led the next option by ${lead.toFixed(2)} in log-likelihood`;
    return { action: o.action, offered: o.options, why: [read, o.narrowed, led, withTool.has(o.action) ? COPIED_ARGUMENTS : null].filter(Boolean).join('; ') };
  });
  return { kind: 'planned', plan: { ...proposal.plan, execution: 'steps', choice: 'ranked', hints } };
}
