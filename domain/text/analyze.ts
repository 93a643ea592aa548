// Deterministic, dependency-free reading of a short free-text objective: its
// sentences, action clauses, key terms, constraints, quantities and options.
// The trial recipes (and later the local planner) build on these facts, so what
// they produce follows from the objective's own content.
import { STOPWORDS, WEAK_VERBS } from './stopwords.ts';

export interface KeyTerm {
  term: string;
  count: number;
}

export interface ObjectiveFacts {
  text: string;
  sentences: string[];
  questions: string[];
  clauses: string[];
  keyTerms: KeyTerm[];
  constraints: string[];
  quantities: string[];
  exclusions: string[];
  options: string[];
}

const CONSTRAINT_CUE =
  /\b(must|must not|should|shall|need(s)? to|required?|without|no more than|at most|at least|under|within|before|by|deadline|budget|limit(ed)?|only|cannot|can't|never)\b/i;
const QUANTITY =
  /(?:\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}\b|\bq[1-4]\b|[$€£]\s?\d(?:[\d,.]*\d)?\s?(?:k|m|bn)?|\b\d(?:[\d,.]*\d)?\s?(?:%|percent|hours?|hrs?|days?|weeks?|months?|years?|minutes?|k|m|bn|usd|eur|gbp|people|users|customers|steps?|pages?|items?)?)(?=[\s.,;:!?)]|$)/gi;
const EXCLUSION = /\b(?:without|excluding|except(?: for)?|not including|but not|do not|don't|no)\s+([^.;,!?]{3,80})/gi;
const CLAUSE_SPLIT = /\s*(?:;|\bthen\b|\bafter that\b|\bfinally\b|(?<=^|[,:.]\s*)next\b|\band\s+next\b|,\s*and\s+|\n|(?:^|\s)(?:\d+[.)]|[-*•])\s+)\s*/i;

/**
 * The sentences of a text: split after a full stop, question or exclamation mark, except after a
 * capital and at most one more letter ("Dr.", "J."), which is far more often a title or an initial,
 * and except inside double quotes, whose sentences are one quotation (when the quotes pair up).
 */
export function sentencesOf(text: string): string[] {
  const straight = (text.match(/"/g) ?? []).length;
  const paired = straight % 2 === 0 && (text.match(/“/g) ?? []).length === (text.match(/”/g) ?? []).length;
  const sentences: string[] = [];
  let start = 0;
  let quoted = false;
  for (const m of text.matchAll(/["“”]|(?<=[.!?]["”]?)(?<!\b[A-Z][a-z]?\.)\s+|\n+/g)) {
    if (/["“”]/.test(m[0])) {
      if (paired) quoted = m[0] === '“' ? true : m[0] === '”' ? false : !quoted;
      continue;
    }
    if (quoted && !m[0].includes('\n')) continue;
    sentences.push(text.slice(start, m.index));
    start = m.index + m[0].length;
  }
  sentences.push(text.slice(start));
  return sentences.map((s) => s.trim()).filter((s) => /[A-Za-z0-9]/.test(s));
}

/** A word without a common inflection (-ing, -ed, -es, -s), kept whole when that would leave two letters or fewer. */
export function stemOf(word: string): string {
  const w = word.toLowerCase();
  for (const suffix of ['ing', 'ed', 'es', 's']) if (w.length > suffix.length + 2 && w.endsWith(suffix)) return w.slice(0, -suffix.length);
  return w;
}

export function wordsOf(text: string): string[] {
  return (text.toLowerCase().match(/[a-z0-9][a-z0-9'-]*/g) ?? []).map((w) => w.replace(/'s$/, ''));
}

/**
 * Key phrases, RAKE-style: runs of up to three content words between stopwords
 * and punctuation ("customer churn", "hosted search service"), scored by how
 * often their words occur and how many words they join; ties keep text order.
 */
export function keyTermsOf(text: string, max = 8): KeyTerm[] {
  const phrases: string[][] = [];
  for (const fragment of text.toLowerCase().split(/[^a-z0-9'\s-]+/)) {
    let run: string[] = [];
    for (const word of wordsOf(fragment)) {
      const weak = word.length < 3 || STOPWORDS.has(word) || WEAK_VERBS.has(word) || /^\d/.test(word);
      if (weak || run.length === 3) {
        if (run.length) phrases.push(run);
        run = weak ? [] : [word];
      } else {
        run.push(word);
      }
    }
    if (run.length) phrases.push(run);
  }
  const frequency = new Map<string, number>();
  const degree = new Map<string, number>();
  for (const phrase of phrases) {
    for (const word of phrase) {
      frequency.set(word, (frequency.get(word) ?? 0) + 1);
      degree.set(word, (degree.get(word) ?? 0) + phrase.length);
    }
  }
  const scored = new Map<string, { score: number; count: number; first: number }>();
  phrases.forEach((phrase, index) => {
    const term = phrase.join(' ');
    const entry = scored.get(term);
    if (entry) {
      entry.count += 1;
      return;
    }
    const score = phrase.reduce((sum, w) => sum + (degree.get(w)! / frequency.get(w)!) * frequency.get(w)!, 0);
    scored.set(term, { score, count: 1, first: index });
  });
  return [...scored.entries()]
    .sort((a, b) => b[1].score * b[1].count - a[1].score * a[1].count || a[1].first - b[1].first)
    .slice(0, max)
    .map(([term, { count }]) => ({ term, count }));
}

/** The clauses of one sentence: split at semicolons, "then", ", and", list markers; fragments under two words dropped. */
export function clausesOfSentence(sentence: string): string[] {
  return sentence
    .split(CLAUSE_SPLIT)
    .map((c) => tidy(c))
    .filter((c) => wordsOf(c).length >= 2);
}

function clausesOf(sentences: string[]): string[] {
  return sentences.flatMap(clausesOfSentence);
}

/** Options named in the text: "X or Y", "X vs Y", "between X and Y", "whether to X". */
export function optionsOf(text: string): string[] {
  const found: string[] = [];
  const add = (o: string | undefined) => {
    const t = o ? tidy(o.replace(/^(to|the|a|an|we|should we)\s+/i, '')) : '';
    if (t && wordsOf(t).length <= 8 && !found.some((f) => f.toLowerCase() === t.toLowerCase())) found.push(t);
  };
  for (const m of text.matchAll(/\bbetween\s+([^,.;?]+?)\s+and\s+([^,.;?]+?)(?=[,.;?]|$)/gi)) {
    add(m[1]);
    add(m[2]);
  }
  for (const m of text.matchAll(/([A-Za-z0-9$][^,.;?]{0,60}?)\s+(?:vs\.?|versus)\s+([^,.;?]{1,60})/gi)) {
    add(lastWords(m[1]!, 5));
    add(firstWords(m[2]!, 5));
  }
  for (const m of text.matchAll(/((?:[^\s,.;?]+\s+){0,4}[^\s,.;?]+)\s+or\s+((?:[^\s,.;?]+\s*){1,5})/gi)) {
    if (/^(whether|between)\b/i.test(m[1]!)) continue;
    add(m[1]!.replace(/^.*\b(whether to|whether|either|to|choose|pick|select|use|adopt|keep)\s+/i, ''));
    add(m[2]);
  }
  for (const m of text.matchAll(/\bwhether\s+(?:or not\s+)?(?:to\s+)?([^,.;?]{3,60})/gi)) {
    const option = m[1]!.split(/\s+or\s+/i)[0];
    add(option);
  }
  return found.slice(0, 5);
}

export function analyzeObjective(text: string): ObjectiveFacts {
  const normalized = text
    .replace(/\r\n?/g, '\n')
    .replace(/[ \t]+/g, ' ')
    .trim();
  const sentences = sentencesOf(normalized);
  return {
    text: normalized,
    sentences,
    questions: sentences.filter((s) => s.endsWith('?')),
    clauses: clausesOf(sentences),
    keyTerms: keyTermsOf(normalized),
    constraints: clausesOf(sentences.filter((s) => !s.endsWith('?'))).filter((c) => CONSTRAINT_CUE.test(c)),
    quantities: unique([...normalized.matchAll(QUANTITY)].map((m) => m[0].trim()).filter((q) => /\d/.test(q))),
    exclusions: unique([...normalized.matchAll(EXCLUSION)].map((m) => tidy(m[1]!))),
    options: optionsOf(normalized),
  };
}

/** Whether `text` contains the key phrase `term` (as produced by keyTermsOf). */
export function mentions(text: string, term: string): boolean {
  return ` ${wordsOf(text).join(' ')} `.includes(` ${term} `);
}

/** Trims punctuation and spaces at both ends. */
export function tidy(s: string): string {
  return s.replace(/^[\s,;:.\-–—]+|[\s,;:.\-–—]+$/g, '').trim();
}

export function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

export function truncate(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1).trimEnd()}…`;
}

function lastWords(s: string, n: number): string {
  return s.trim().split(/\s+/).slice(-n).join(' ');
}

function firstWords(s: string, n: number): string {
  return s.trim().split(/\s+/).slice(0, n).join(' ');
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
