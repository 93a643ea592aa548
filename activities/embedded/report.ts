// The embedded adapter's side of the tool-calling protocol, as pure functions: what its plan's steps
// become as protocol calls, and the report it gives once they ran. English heuristics live here (the
// audience of a delivery, where each requested action's words stand in the request) because they
// help the 135M model only; verification reads the report structurally, as it reads any model's.
import { namesPath } from '../../domain/agent/request-spans.ts';
import { digestOf } from '../../domain/digest.ts';
import type { PlanStep } from '../../domain/planning/plan.ts';
import { messageSpan } from '../../domain/planning/material.ts';
import { introducedText, type RequestedAction } from '../../domain/planning/requested-actions.ts';
import { listCountOutput } from '../../domain/runs/tool-outputs.ts';
import { sentencesOf, truncate, wordsOf } from '../../domain/text/analyze.ts';
import { needsStronger } from '../../domain/planning/needs-stronger.js';

/** The id of the protocol call a plan step becomes: its reports cite it. */
export const callIdOf = (step: PlanStep) => `emb_${step.id}`;

const AUDIENCE_BY_VERB = /^(?:please\s+)?(?:tell|notify|inform|remind|alert|ping|message|let)\s+(.+?)(?:\s+know\b|\s+that\b|\s+about\b|\s+to\b|:|,|$)/i;
const AUDIENCE_AFTER_TO = /\bto\s+(.+?)(?:\s+that\b|\s+saying\b|\s+about\b|:|,|\.|$)/i;
/** The most of a clause taken as an audience: longer is not a name. */
const AUDIENCE_MAX_WORDS = 6;

/** Who a delivery is for, as its clause names them ("Tell the support team that …": "the support team"); else the tenant's webhook. */
export function audienceOf(clause: string): string {
  const named = AUDIENCE_BY_VERB.exec(clause.trim())?.[1] ?? AUDIENCE_AFTER_TO.exec(clause)?.[1];
  const words = named?.trim().split(/\s+/) ?? [];
  if (words.length === 0 || words.length > AUDIENCE_MAX_WORDS) return "the tenant's webhook";
  return truncate(words.join(' '), 200);
}

/**
 * A plan step's arguments as the protocol's tool takes them, or why there are none. The built-ins that
 * read the request by words on this model (a list to count, the text to search) get it here, so the
 * protocol's tool then does exactly what its arguments say.
 */
export function protocolArguments(step: PlanStep, input: string, actions: RequestedAction[]): Record<string, unknown> | string {
  const args = step.arguments ?? {};
  const action = step.covers?.[0] ?? null;
  switch (step.tool) {
    case 'count_list_items': {
      const listed = listCountOutput(input, action, actions);
      return listed ? { items: listed.items } : 'the request gives no list (after a colon, or in quotes) to count';
    }
    case 'find_contact_details':
      return { text: input };
    case 'text_analysis':
      return { text: String(args.text ?? step.scope) };
    case 'memory_recall':
      return { query: String(args.query ?? step.scope) };
    case 'webhook_delivery': {
      const delivered = actions.find((a) => (step.covers ?? []).includes(a.n) && a.kind === 'delivery') ?? actions[(action ?? 1) - 1];
      const message = args.message;
      if (typeof message !== 'string' || !message.trim()) return 'it has no message to send';
      return { to: audienceOf(delivered?.clause ?? ''), message };
    }
    default:
      return step.effect === 'external' ? withGivenText(step, args, input, actions) : args;
  }
}

/** The first required text argument of a tool that takes what to write (content, text, message, body). */
function textArgument(args: Record<string, unknown>): string | null {
  return Object.keys(args).find((k) => /^(?:content|text|message|body|note)$/i.test(k) && typeof args[k] === 'string') ?? null;
}

/** Every string an argument value holds, at any depth. */
const stringsIn = (v: unknown): string[] =>
  typeof v === 'string' ? [v] : Array.isArray(v) ? v.flatMap(stringsIn) : v && typeof v === 'object' ? Object.values(v).flatMap(stringsIn) : [];

/** The text a sentence gives after a colon and a space (not a time's or an address's colon), without its closing stop. */
function afterColon(sentence: string): string | null {
  const m = /:\s+(\S.*)$/.exec(sentence);
  return m
    ? m[1]!
        .trim()
        .replace(/[.!?]+$/, '')
        .trim() || null
    : null;
}

/**
 * An external step's text as the request gives it. A text a colon introduces (on its line or the
 * lines after it), a quoted text, or one after "saying" or "that", is written verbatim, punctuation
 * included. A delivery's text after a colon must be the one the model wrote, or stand whole in its arguments. Any other text to write is the one words that give a text introduce
 * ("… listing milk and eggs", "with the text …"), to the clause's end and verbatim; words the model
 * picked from the instruction ("add coffee beans to the end of shopping.txt") are not a text the
 * request gives, and the step does not run. An edit that replaces a text with itself, or a call with an
 * empty list of changes (`"edits": []`), does not run.
 */
function withGivenText(step: PlanStep, args: Record<string, unknown>, input: string, actions: RequestedAction[]): Record<string, unknown> | string {
  const key = textArgument(args);
  const action = actions.find((a) => (step.covers ?? []).includes(a.n));
  if (!action) return args;
  const span = messageSpan(action.clause);
  // A text a colon introduces, on its line or the lines after it ("containing exactly this line:\nStandup
  // moves …"), is written verbatim, whatever the model wrote; a delivery's message is its own (material.ts).
  // "with the text Note: back at 3" gives its text before the colon; "containing exactly this line:" points past it.
  const before = INTRODUCED_TEXT.exec(action.clause.trim())?.[1];
  const pointsPast = before === undefined || wordsOf(before).every((w) => POINTING.has(w.toLowerCase()));
  const colonText = key && action.kind !== 'delivery' && span?.marker !== 'quote' && pointsPast ? introducedText(input, action, actions) : null;
  if (key && colonText) {
    // "one item per line: passport, charger, umbrella" asks the text laid out anew, which no copy of it is.
    if (LAID_OUT.test(action.clause)) return needsStronger(`it asks the text it gives laid out anew, which the small model does not do`);
    return { ...args, [key]: colonText };
  }
  if (key && span) {
    if (span.marker === 'quote' || span.marker === 'saying' || span.marker === 'that') return { ...args, [key]: span.message };
    if (String(args[key]).trim() === span.message) return args;
    return needsStronger(`the small model did not write the text the request gives after its colon`);
  }
  const given = afterColon(sentencesOf(input)[action.sentence] ?? action.clause);
  if (given) {
    if (stringsIn(args).some((v) => v.includes(given))) return args;
    return needsStronger(`the small model did not carry the text the request gives after its colon whole`);
  }
  if (changesNothing(args))
    return needsStronger(`the small model's ${step.tool} call would change nothing (an empty list of changes, or a text replaced with itself)`);
  if (!key || span) return args;
  // A text introduced by the words that give one ("with the text …", "listing …") runs to the clause's end, verbatim.
  const introduced = INTRODUCED_TEXT.exec(action.clause.trim());
  const text = introduced?.[1]
    ?.trim()
    .replace(/[.!?]+$/, '')
    .trim();
  if (text && !namesPath(text)) return { ...args, [key]: text };
  return needsStronger(`the small model took words of the instruction for the text to write, not a text the request gives`);
}

/** Words that point at a text to come ("containing exactly this line:"), rather than begin it. */
const POINTING = new Set(
  'exactly just only this these that the following as follows below text line lines words row rows content contents one two three'.split(' '),
);

/** Words that ask a given text laid out anew ("one item per line"); English, so the embedded adapter's. */
const LAID_OUT =
  /\b(?:per line|(?:each|one) on (?:its|a|their) own line|on (?:separate|its own|their own) lines?|as a (?:bulleted |numbered )?list|one (?:item|entry|name) per)\b/i;

/** Words that give the text to write when no quote, colon or "saying" does (English, so the embedded adapter's). */
const INTRODUCED_TEXT = /\b(?:with the (?:text|line|words)|with the contents?|with text|containing|that reads|reading|listing)\s+(\S.*)$/i;

/** Whether an edit in the arguments replaces a text with the same text (an `oldText` and a `newText` alike). */
function changesNothing(value: unknown): boolean {
  // An empty list ("edits": []) asks the tool to do nothing: the change asked for would not happen.
  if (Array.isArray(value)) return value.length === 0 || value.some(changesNothing);
  if (!value || typeof value !== 'object') return false;
  const entries = Object.entries(value);
  const old = entries.find(([k, v]) => /^old/i.test(k) && typeof v === 'string');
  const next = entries.find(([k, v]) => /^new/i.test(k) && typeof v === 'string');
  return (old !== undefined && next !== undefined && old[1] === next[1]) || entries.some(([, v]) => changesNothing(v));
}

/** The assistant message's tool call for a step, in OpenAI's wire format. */
export function wireCall(step: PlanStep, args: Record<string, unknown>) {
  return { id: callIdOf(step), type: 'function' as const, function: { name: step.tool, arguments: JSON.stringify(args) } };
}

/** The call a turn proposes for a step: checked arguments, bound by their digest. */
export function proposedCall(step: PlanStep, args: Record<string, unknown>) {
  return { id: callIdOf(step), name: step.tool, arguments: args, problem: null, digest: digestOf(args) };
}

/** The opening words of an action's request, case and spacing aside: what a text to write never holds. */
const opening = (clause: string) => clause.toLowerCase().split(/\s+/).filter(Boolean).slice(0, 3).join(' ');

/**
 * Whether a text argument of an external step (not a path) holds the instruction of the action it
 * carries out: the small model took the request for the text to write ("Save a packing list to …").
 */
export function copiesInstruction(args: Record<string, unknown>, actions: RequestedAction[], step: PlanStep): boolean {
  const covered = actions.filter((a) => (step.covers ?? []).includes(a.n));
  const texts = Object.values(args).filter((v): v is string => typeof v === 'string' && !/^\S*\/\S*$/.test(v));
  return covered.some((a) => {
    const words = opening(a.clause);
    return words.split(' ').length === 3 && texts.some((t) => t.toLowerCase().replace(/\s+/g, ' ').includes(words));
  });
}
