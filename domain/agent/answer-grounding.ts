// How far a model's free-text answer rests on the text it worked on. A small model, asked to
// extract or summarise, sometimes writes values the text never held (an email address, a figure)
// or a summary of something else. Two measures, both from the words alone:
// - invented values: email and web addresses, percentages, phone numbers and any other figure in the
//   answer that the text does not hold (each is copied, never derived: a figure worked out from the
//   text is the calculate tool's to give, which a 135M model does not reliably call, so its absence
//   means it was made up or miscomputed);
// - the grounded share: how many of the answer's content words the text holds.
// A translation cannot be checked this way; it is neither flagged nor confirmed, and the receipt says
// an answer's work is the model's own (checked: false). Counts come from count_list_items, not here.
import { STOPWORDS } from '../text/stopwords.ts';
import { stemOf, wordsOf } from '../text/analyze.ts';

const VALUES: { kind: string; pattern: RegExp }[] = [
  { kind: 'an email address', pattern: /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g },
  { kind: 'a web address', pattern: /\bhttps?:\/\/[^\s"'<>)]+/g },
  { kind: 'a percentage', pattern: /\d+(?:[.,]\d+)?\s?%/g },
  { kind: 'a phone number', pattern: /\+?\d[\d ().-]{5,}\d/g },
  { kind: 'a figure', pattern: /(?<![\w.,:])\d+(?:[.,:]\d+)*/g },
];

/** Numbers a text may spell out ("six" holds 6). */
const SPELLED =
  'zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty'.split(' ');
const spelledIn = (figure: string, source: string) => {
  const n = Number(figure);
  return Number.isInteger(n) && n < SPELLED.length && new RegExp(`\\b${SPELLED[n]}\\b`, 'i').test(source);
};

const compact = (s: string) => s.toLowerCase().replace(/[\s().-]+/g, '');

/** The kinds of value the answer names that the text does not hold (each kind once). */
export function inventedValues(answer: string, source: string): string[] {
  const held = compact(source);
  const kinds = new Set<string>();
  for (const { kind, pattern } of VALUES) {
    for (const m of answer.matchAll(pattern)) {
      const value = m[0].replace(/[.,;:]+$/, '');
      if (!held.includes(compact(value)) && !(kind === 'a figure' && spelledIn(value, source))) kinds.add(kind);
    }
  }
  return [...kinds];
}

const contentWords = (text: string) => wordsOf(text).filter((w) => w.length > 2 && !STOPWORDS.has(w));

/** The share of the answer's content words that the text holds (1 for an answer without any). */
export function groundedShare(answer: string, source: string): number {
  const words = contentWords(answer);
  if (!words.length) return 1;
  const held = new Set(contentWords(source).map(stemOf));
  return words.filter((w) => held.has(stemOf(w))).length / words.length;
}

export interface AnswerGrounding {
  invented: string[];
  share: number;
}

export function answerGrounding(answer: string, source: string): AnswerGrounding {
  return { invented: inventedValues(answer, source), share: groundedShare(answer, source) };
}

/** Whether `a` rests on the text better than `b`: fewer invented values, then a larger grounded share. */
export function betterGrounded(a: AnswerGrounding, b: AnswerGrounding): boolean {
  return a.invented.length !== b.invented.length ? a.invented.length < b.invented.length : a.share > b.share;
}
