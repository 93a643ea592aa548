// A figure to work out from the request's numbers ("total for the week?", "what's the average?"), on
// the embedded model: the small model does no arithmetic. The adapter lists the few calculations the
// request's numbers allow (a total, an average, the largest, the smallest), the
// model chooses the one the question asks for by its own likelihood, measured against the same numbers
// asked nothing in particular, and `calculate` works it out exactly as a tool call the run records and
// verification repeats. A choice that does not lead the next clearly enough, or numbers too many or too
// few, leave the action unresolved (asks-figure.ts), as before.
import type { ChatMessage } from '../../domain/chat/types.ts';
import type { RequestedAction } from '../../domain/planning/requested-actions.ts';
import type { AgentDeps, CallContext } from '../model-call.ts';
import { figureWordsIn } from './asks-figure.ts';
import { leader, type RankStopped, rankScores } from './rank.ts';
import { withoutDates } from './written-dates.ts';

/** A calculation the adapter offers: in words for the model, as an expression for `calculate` (a percentage's ends in "* 100"). */
export interface Calculation {
  words: string;
  expression: string;
}

/** A number as written ("1,249.50"), not inside a word, another number or a time ("10:30"), nor an id ("#5521"): its whole part, then its decimals. */
const NUMBER = String.raw`(?<![\w.,:#])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?![\d]|[,:]\d)`;

/** A number of the request (thousands separators dropped) and the word written right after it ("h" in "7.5h", "mugs" in "3 blue mugs" is "blue"). */
export interface StatedNumber {
  value: string;
  after: string;
}

/** The request's numbers, in order, those of its dates aside (written-dates.ts); a percentage is its number, "%" after it. */
export function numbersOf(text: string): StatedNumber[] {
  // A word that only joins two numbers ("12.35 and 101.75") is not what the first one counts; a date's numbers count nothing.
  const found = withoutDates(text).matchAll(new RegExp(String.raw`${NUMBER}(?:\s*(%|[\p{L}-]+)(\s+(?=\d))?)?`, 'gu'));
  // Nor is a conjunction after the last number ("Joost 7.25 and I did 4").
  const counted = (m: RegExpMatchArray) => (m[4] || /^(?:and|or)$/i.test(m[3] ?? '') ? '' : (m[3] ?? '').toLowerCase());
  return [...found].map((m) => ({ value: `${m[1]!.replace(/,/g, '')}${m[2] ?? ''}`, after: counted(m) }));
}

const listed = (xs: string[]) => `${xs.slice(0, -1).join(', ')} and ${xs.at(-1)}`;

/**
 * The calculations the numbers allow: with three or more that count the same thing (the same word
 * after each, or none: not "3 blue mugs … 2 red mugs"), their total, average, largest and smallest.
 * Two numbers relate in too many ways (a change, a share, what is left) for the small model to tell
 * apart: measured on the tuning half, its choices among them were right as often as wrong, whatever
 * their lead, so none is offered.
 */
export function calculationsOf(stated: StatedNumber[]): Calculation[] {
  if (stated.length < 3 || !stated.every((n) => n.after === stated[0]!.after)) return [];
  const numbers = stated.map((n) => n.value);
  const all = numbers.join(', ');
  return [
    { words: `the total of ${listed(numbers)}`, expression: `sum(${all})` },
    { words: `the average of ${listed(numbers)}`, expression: `mean(${all})` },
    { words: `the largest of ${listed(numbers)}`, expression: `max(${all})` },
    { words: `the smallest of ${listed(numbers)}`, expression: `min(${all})` },
  ];
}

/**
 * An arithmetic expression the action writes out itself ("what's 1,249.50 + 387.25 + 92.80?"), ready
 * for `calculate` (thousands separators dropped); null when it writes none. No model chooses it.
 */
export function writtenExpression(clause: string): string | null {
  const number = String.raw`\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?`;
  // A minus or an "x" only between spaces: "555-0142" and "2026-12-06" are no subtraction, "3x4" no product.
  const operator = String.raw`(?:\s+[-x]\s+|\s*[+*/×÷]\s*)`;
  // "from 31/03/2026 to 30/06/2026" divides nothing.
  const m = new RegExp(String.raw`\(?\s*(?:${number})(?:\s*\)?${operator}\(?\s*(?:${number}))+\s*\)?`).exec(withoutDates(clause));
  if (!m) return null;
  return m[0]
    .replace(/(\d),(?=\d{3})/g, '$1')
    .replace(/[×x]/g, '*')
    .replace(/÷/g, '/')
    .trim();
}

// Words that pick some numbers out ("the ones over 2 hours", "not the vans", "only the paid ones").
const PICKS_SOME =
  /\b(?:over|under|above|below|more than|less than|greater than|fewer than|longer than|shorter than|except|excluding|apart from|other than|only|not|without|at least|at most|just)\b|n['’]t\b/i;

/**
 * Whether the request's numbers are one plain list the question takes whole: each of its parts (between commas,
 * semicolons, line breaks and "and") holds at most one number ("Room 12 £80" holds two), the question is not who or
 * which has it ("Who worked the most hours?"), and it names no item's label ("Total hours Mon to Wed? Mon 7, Tue 8").
 */
export function plainList(input: string, clause: string): boolean {
  const parts = input.split(/[,;\n]|\band\b/i);
  if (parts.some((p) => numbersOf(p).length > 1)) return false;
  if (/^(?:who|whom|whose|which|where)\b/i.test(clause.replace(/^\W*(?:(?:hi|hey|hello)\W+)?(?:(?:can|could|would) you\s+)?(?:tell me\s+)?/i, '')))
    return false;
  // The word before each number, unless it ends a lead-in ("my timesheet: 3.5").
  const labels = parts.flatMap((p) => {
    const m = /([\p{L}]{2,})(\W*)\s*[£$€]?\d/u.exec(p);
    return m && !m[2]!.includes(':') ? [m[1]!.toLowerCase()] : [];
  });
  const asked = new Set(clause.toLowerCase().match(/\p{L}+/gu) ?? []);
  return !labels.some((l) => asked.has(l));
}

/** At most this many numbers: more, and the question is likely about some of them, which no template here picks. */
const NUMBERS_MAX = 6;

/**
 * The least lead, in the difference of log-likelihoods with and without the question, the chosen
 * calculation must have over the next; calibrated on the fresh eval's tuning half (docs/models.md).
 */
const MIN_CALCULATION_LEAD = 0.5;

const INSTRUCTIONS = 'Say which calculation answers the question.';
const PREFIX = 'It is ';
const NEUTRAL = 'Which numbers does it give?';

export type ChosenCalculation = { kind: 'chosen'; calculation: Calculation } | { kind: 'unsure' } | RankStopped;

/** The calculation that answers the action, chosen by the model among those its request's numbers allow. */
export async function chooseCalculation(deps: AgentDeps, c: CallContext, input: string, action: RequestedAction): Promise<ChosenCalculation> {
  const numbers = numbersOf(input);
  const offered = numbers.length <= NUMBERS_MAX ? calculationsOf(numbers) : [];
  if (!offered.length) return { kind: 'unsure' };
  const named = namedCalculation(action.clause);
  if (named !== null && onlyNamedOver(input, action.clause, named)) return { kind: 'chosen', calculation: offered[named]! };
  const asked = (q: string): ChatMessage[] => [
    { role: 'system', content: INSTRUCTIONS },
    { role: 'user', content: `${input}\n\nQuestion: ${q}` },
  ];
  const candidates = offered.map((o) => `${o.words}.`);
  const withQuestion = await rankScores(deps, c, `figure:${action.n}:asked`, asked(action.clause), candidates, PREFIX);
  if ('kind' in withQuestion) return withQuestion;
  const neutral = await rankScores(deps, c, `figure:${action.n}:neutral`, asked(NEUTRAL), candidates, PREFIX);
  if ('kind' in neutral) return neutral;
  const { best, lead } = leader(withQuestion.map((s, i) => s - neutral[i]!));
  if (named !== null && named !== best) return { kind: 'unsure' };
  // The question names the calculation the model ranks first ("add up my hours"): the two agree, whatever the
  // lead, unless the request picks some of its numbers out, which no template here does.
  const agreed = named === best && !PICKS_SOME.test(input) && plainList(input, action.clause);
  if (lead < MIN_CALCULATION_LEAD && !agreed) return { kind: 'unsure' };
  return { kind: 'chosen', calculation: offered[best]! };
}

/** Between two numbers of one enumeration: separators, units and names, no verb ("212 ms, the target is 200 ms" is two things). */
const ENUMERATION_GAP_MAX = 40;
const STATES = /\b(?:is|are|was|were|be|been|has|have|had|does|did|then|[a-z]{3,}ed)\b/i;

/**
 * Whether the request asks only the calculation it names, of one enumeration of numbers it takes whole: every word of
 * it that asks a figure names that calculation ("Add them up and post the total"; not "how many … in total", "add them
 * up, then divide by 3"), its numbers stand in one list with nothing said between them, and the list is plain
 * (plainList, no word picking some out). Then the words decide it, not the small model's ranking, which had ranked the
 * average first for "… €89.99 from Oduya Print. Add them up and post the total", and the run sent nothing.
 */
export function onlyNamedOver(input: string, clause: string, named: number): boolean {
  const words = CALCULATION_WORDS[named]!;
  if (!figureWordsIn(input).every((w) => words.test(w)) || PICKS_SOME.test(input) || !plainList(input, clause)) return false;
  const text = withoutDates(input);
  // A date among the numbers is a list the words do not name whole: the model's ranking must agree.
  if (text !== input) return false;
  const at = [...text.matchAll(new RegExp(NUMBER, 'g'))];
  for (let i = 1; i < at.length; i++) {
    const gap = text.slice(at[i - 1]!.index! + at[i - 1]![0].length, at[i]!.index);
    if (gap.length > ENUMERATION_GAP_MAX || STATES.test(gap) || /[.;?!]\s/.test(gap.replace(/\b(?:Co|Ltd|Inc|St|Dr|Mr|Mrs|Ms)\.\s/g, ''))) return false;
  }
  return true;
}

// The words that name each calculation calculationsOf offers, in its order: total, average, largest, smallest.
const CALCULATION_WORDS = [
  /\b(?:total|sum|add(?:ed|s)?(?:\s+(?:them|these|those|it|all|everything|this))*\s+up|altogether|all together|in all|combined)\b/i,
  /\b(?:average|mean|per (?:day|week|month|person|head|item))\b/i,
  /\b(?:largest|biggest|highest|most|max(?:imum)?|greatest)\b/i,
  /\b(?:smallest|lowest|least|min(?:imum)?|cheapest|fewest)\b/i,
];

/**
 * The one calculation the question names in words ("in total", "on average", "the cheapest"), by its
 * index in calculationsOf's order; null when it names none, or more than one. The model's choice must
 * agree with it: a clear lead for the average of a question about the total is still wrong.
 */
export function namedCalculation(clause: string): number | null {
  const named = CALCULATION_WORDS.flatMap((words, i) => (words.test(clause) ? [i] : []));
  return named.length === 1 ? named[0]! : null;
}
