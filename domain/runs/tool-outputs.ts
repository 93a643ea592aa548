// Outputs of the deterministic tools, as pure functions: the tool activity
// produces them and verification derives them again to check the recorded output.
import { digestOf } from '../digest.ts';
import { type RequestedAction, requestedActions } from '../planning/requested-actions.ts';
import { analyzeObjective } from '../text/analyze.ts';
import { contactDetailsIn, listItemsAt, listItemsIn } from '../text/find-in-text.ts';

export function textAnalysisOutput(scope: string) {
  const facts = analyzeObjective(scope);
  return {
    key_phrases: facts.keyTerms.map((k) => k.term),
    constraints: facts.constraints,
    quantities: facts.quantities,
    questions: facts.questions,
    sentences: facts.sentences.length,
  };
}

/**
 * What a run records of one recalled vault entry: a reference (id, version, digest
 * and length of the text), never the text itself, so forgetting the entry in the
 * vault leaves no copy of it in the run's output, result or workflow history. The
 * model of an upstream run reads the text from the vault when its turn is made.
 */
export interface MemoryReference {
  id: string;
  version: number;
  /** digestOf(content) of the text recalled. */
  digest: string;
  characters: number;
}

export function memoryRecallOutput(entries: { id: string; version: number; content: string }[]): { entries: MemoryReference[] } {
  return { entries: entries.map((e) => ({ id: e.id, version: e.version, digest: digestOf(e.content), characters: e.content.length })) };
}

/** Source coverage of one recalled entry; outputs recorded before references (with `content`) still count. */
export function memorySource(e: Partial<MemoryReference> & { id: string; content?: string }) {
  const content = e.content ?? '';
  return { source: `memory:${e.id}`, digest: e.digest ?? digestOf(content), characters: e.characters ?? content.length, units_total: 1, units_used: 1 };
}

const listed = (label: string, xs: string[]) => (xs.length ? [`${label}: ${xs.join(', ')}.`] : []);

/** count_list_items: the items of the list the action's sentence gives, counted; null when it gives none. */
export function listCountOutput(input: string, action: number | null, actions?: RequestedAction[]) {
  const a = action === null ? undefined : (actions ?? requestedActions(input))[action - 1];
  const items = a ? listItemsAt(input, a.sentence) : listItemsIn(input);
  // A colon that introduces the request itself ("Quick one: can you look at a.csv and tell me …?") gives no list: an item is
  // the request. After the action's own colon, a list is its material ("Count these: tin of beans, loaf of bread").
  const colon = a?.clause.indexOf(':') ?? -1;
  const instruction = a === undefined ? '' : colon < 0 || /\?\s*$/.test(a.clause) ? a.clause : a.clause.slice(0, colon);
  const own = (item: string) => item.split(/\s+/).length >= 3 && instruction.includes(item);
  if (!items || items.some(own)) return null;
  return { action, count: items.length, items, answer: `${items.length} item${items.length === 1 ? '' : 's'}: ${items.join(', ')}.` };
}

/** find_contact_details: the email addresses, web addresses and phone numbers written anywhere in the input. */
export function contactDetailsOutput(input: string, action: number | null) {
  const found = contactDetailsIn(input);
  const lines = [...listed('Email addresses', found.emails), ...listed('Web addresses', found.urls), ...listed('Phone numbers', found.phones)];
  return { action, ...found, answer: lines.length ? lines.join(' ') : 'The text gives no email address, web address or phone number.' };
}
