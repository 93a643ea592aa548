// Sorting the list a request gives ("Sort these alphabetically: pear, Apple, mango"), on the embedded
// model: the order is the adapter's, exactly (case aside, by Unicode collation), never the small
// model's prose, which puts names "in order" as they came (issue 63). Only an alphabetical order is
// done here; any other ("by price") stays the model's to answer, or unresolved. English words, so
// they live in the embedded adapter only.
import type { RequestedAction } from '../../domain/planning/requested-actions.ts';
import { listItemsAt } from '../../domain/text/find-in-text.ts';

const ALPHABETICAL = /\b(?:alphabeti[sz]e|alphabetical(?:ly)?|a-z|a to z)\b|\bsort\b(?![^:]*\bby\b)/i;
const REVERSED = /\b(?:reverse|z-a|z to a|descending)\b/i;

// A key other than the item itself ("alphabetically by surname"): sorting the items as written answers another question.
const OTHER_KEY = /\bby\s+(?!name\b|names\b)\w+/i;

/** Whether the action asks to put the list it gives in alphabetical order, of the items as written. */
export const asksAlphabeticalOrder = (action: RequestedAction) => ALPHABETICAL.test(action.clause) && !OTHER_KEY.test(action.clause.split(/:\s/)[0] ?? '');

/** The list the action's sentence gives, in alphabetical order, as one line; null when it asks no such order or gives no list. */
export function alphabeticalAnswer(input: string, action: RequestedAction): string | null {
  if (!asksAlphabeticalOrder(action)) return null;
  const items = listItemsAt(input, action.sentence);
  if (!items || items.length < 2) return null;
  const sorted = [...items].sort((a, b) => a.localeCompare(b, 'en', { sensitivity: 'base' }));
  return (REVERSED.test(action.clause) ? sorted.reverse() : sorted).join(', ');
}
