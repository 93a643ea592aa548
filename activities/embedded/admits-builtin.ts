// Which built-in tools an action may use on the embedded model. count_list_items counts and lists every
// item of a list the request gives: a request that only names a list ("the list is in staff_extensions.csv",
// "is Oliver on the allergy list?", "add this line to the shopping list") asks neither; one for how many
// different names ("Jonas (again)"), for units of text ("how many words"), or for some of the items ("how many
// of these are vegetarian") asks another count than every item's. English words, so this adapter's (issue 63:
// the small model chose the count for all of these by the word "list"); a capable model decides itself.
import type { AdmitsBuiltin } from '../../domain/agent/plan-options.ts';
import type { RequestedAction } from '../../domain/planning/requested-actions.ts';
import { listCountOutput } from '../../domain/runs/tool-outputs.ts';

const ASKS_COUNT = /\b(?:how many|count|number of)\b/i;
// Some of the items, or how often one stands: "different names", "how many times", "the ones who haven't paid".
const NOT_EVERY_ITEM = /\b(?:different|unique|distinct|separate|times)\b|\b(?:ones?|those|people|items?|names?)\s+(?:who|that|which|whose|with|without)\b/i;
// A measure, not a number of items: "how many kg of honey", "how many hours did it take".
const MEASURE =
  /\bhow many\s+(?:kgs?|kilos?|kilograms?|grams?|g|lbs?|pounds?|litres?|liters?|ml|hours?|hrs?|minutes?|mins?|days?|weeks?|miles?|km|metres?|meters?|euros?|dollars?|square)\b/i;
// Units of text, not items of a list.
const TEXT_UNIT =
  /\b(?:how many|count|number of)\b[^.?!:]*?\b(?:words?|characters?|letters?|sentences?|lines?|paragraphs?|syllables?|vowels?|consonants?|digits?|spaces?|pages?)\b|\b(?:word|character|letter|line|page)\s+count\b/i;
// Some of the items, not all: "how many of these are vegetarian", "how many of them have paid".
const FILTERED_COUNT =
  /\bhow many\s+(?:of\s+(?:these|those|them|the\s+\w+)|\w+\s+of\s+(?:these|those|them))\s+(?:are|is|were|was|have|has|had|can|need|needs|do|does|did)(?:n['’]?t)?\b/i;
// Items picked out by what they do or are, after where they stand: "how many on the list are vegetarian", "how many people on it live in Leeds".
const PICKED_OUT = /\bhow many\b[^.?!:]*?\b(?:on|in)\s+(?:the|this|that|my|our)?\s*\w*\s*(?:list|sheet|rota|it|there)\s+(?!(?:are|is)\s+(?:there|on|in)\b)\w+/i;

/**
 * The built-ins this model's actions may use in `input`: count_list_items only where every item of a list is to be
 * counted or listed, and the request gives that list to count ("how many elbows are in stock.csv" gives none: a read does).
 */
export const admitsBuiltin =
  (input: string, actions: RequestedAction[]): AdmitsBuiltin =>
  (tool, action) => {
    if (tool !== 'count_list_items') return true;
    const asks = action.verb === 'list' || ASKS_COUNT.test(action.clause);
    if (!asks || [NOT_EVERY_ITEM, TEXT_UNIT, FILTERED_COUNT, PICKED_OUT, MEASURE].some((r) => r.test(action.clause))) return false;
    return listCountOutput(input, action.n, actions) !== null;
  };
