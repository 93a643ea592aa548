// Grounded extraction: builds a value for a supported JSON Schema only from
// what the source text states, deterministically. It never guesses: a field the
// text holds no value for has no value, and a required one is reported as
// missing so the caller can refuse instead of inventing (no first enum value,
// no 0, no "3" out of "3pm", no padding, no clamping).
import { analyzeObjective, tidy } from '../text/analyze.ts';
import { STOPWORDS } from '../text/stopwords.ts';

type Schema = Record<string, unknown>;

export type FillResult = { ok: true; value: unknown } | { ok: false; missing: string[] };

interface FillSource {
  sentences: string[];
  statements: string[];
  questions: string[];
  clauses: string[];
  phrases: string[];
}

/** A value found in a sentence, at a character index. */
interface Hit<T> {
  value: T;
  index: number;
}

function sourceOf(text: string): FillSource {
  const facts = analyzeObjective(text);
  return {
    sentences: facts.sentences,
    // A question asks for a value; it does not state one ("Which regions are cheapest?").
    statements: facts.sentences.filter((s) => !s.endsWith('?')),
    questions: facts.questions,
    clauses: facts.clauses,
    phrases: facts.keyTerms.map((k) => k.term),
  };
}

export function fillSchema(schema: Schema, source: string, name = 'value'): FillResult {
  return fill(schema, sourceOf(source), name, '');
}

function fill(schema: Schema, src: FillSource, name: string, path: string): FillResult {
  if (!isFixed(schema) && schema.type === 'object') return fillObject(schema, src, path);
  if (!isFixed(schema) && schema.type === 'array') return fillArray(schema, src, name, path);
  const [value] = candidates(schema, src, name);
  return value === undefined ? { ok: false, missing: [path || name] } : { ok: true, value };
}

/** Optional properties without a value are left out; a required one without a value leaves the object without one. */
function fillObject(schema: Schema, src: FillSource, path: string): FillResult {
  const required = new Set((schema.required ?? []) as string[]);
  const value: Record<string, unknown> = {};
  const missing: string[] = [];
  for (const [key, child] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) {
    const result = fill(child, src, key, path ? `${path}.${key}` : key);
    if (result.ok) value[key] = result.value;
    else if (required.has(key)) missing.push(...result.missing);
  }
  return missing.length ? { ok: false, missing } : { ok: true, value };
}

/** A schema whose values are listed by the schema itself (const, enum), whatever its type. */
function isFixed(schema: Schema): boolean {
  return schema.const !== undefined || schema.enum !== undefined;
}

function fillArray(schema: Schema, src: FillSource, name: string, path: string): FillResult {
  const items = (schema.items ?? {}) as Schema;
  // Free-text items come from stated lists or list-like sources; any other item schema from its own candidates.
  const found = unique(items.type === 'string' && !isFixed(items) ? listCandidates(items, src, name) : candidates(items, src, name));
  const value = found.slice(0, (schema.maxItems as number | undefined) ?? found.length);
  return value.length < ((schema.minItems as number | undefined) ?? 0) ? { ok: false, missing: [path || name] } : { ok: true, value };
}

/** Every grounded value for one field, best first; empty when the text states none. */
function candidates(schema: Schema, src: FillSource, name: string): unknown[] {
  // The schema's own value, not an invented one.
  if (schema.const !== undefined) return [schema.const];
  if (Array.isArray(schema.enum)) return enumCandidates(schema.enum, src, name);
  switch (schema.type) {
    case 'string':
      return stringCandidates(schema, src, name);
    case 'integer':
    case 'number':
      return numberCandidates(schema, src, name);
    case 'boolean':
      return booleanCandidates(src, name);
    case 'null':
      return [null];
    case 'object':
    case 'array': {
      // As a list item, an empty result names nothing the text states, so it is no item at all.
      const result = fill(schema, src, name, name);
      return result.ok && !isEmpty(result.value) ? [result.value] : [];
    }
    default:
      return [];
  }
}

// --- Field names and where the text mentions them ---------------------------

/** "budget_usd", "budgetUsd", "budget-usd" → ["budget", "usd"]. */
function nameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

/** The words of a name that carry its meaning (stopwords dropped unless nothing else is left). */
function fieldWords(name: string): string[] {
  const words = nameWords(name);
  const content = words.filter((w) => !STOPWORDS.has(w));
  return content.length ? content : words;
}

function singular(word: string): string {
  return word.length > 3 && word.endsWith('s') && !word.endsWith('ss') ? word.slice(0, -1) : word;
}

/**
 * The same word up to inflection: a shared start of at least four letters that
 * leaves at most two letters of the shorter word ("hour"/"hours",
 * "price"/"pricing", "priority"/"priorities"); short words must be equal.
 */
function sameWord(a: string, b: string): boolean {
  if (a === b) return true;
  const shorter = Math.min(a.length, b.length);
  if (shorter < 4) return false;
  let shared = 0;
  while (shared < shorter && a[shared] === b[shared]) shared += 1;
  return shared >= 4 && shared >= shorter - 2;
}

/** Character indexes of the words in `sentence` that name the field. */
function mentionsOf(sentence: string, words: string[]): number[] {
  return [...sentence.matchAll(/[A-Za-z0-9]+/g)].filter((m) => words.some((w) => sameWord(m[0].toLowerCase(), w))).map((m) => m.index!);
}

/** Clause boundaries of a sentence (commas not inside numbers like 2,000; semicolons; dashes). */
function clauseCuts(sentence: string): number[] {
  return [...sentence.matchAll(/[;,](?!\d)|\s[–—-]\s/g)].map((m) => m.index!);
}

function clauseAt(cuts: number[], index: number): number {
  return cuts.filter((c) => c < index).length;
}

/**
 * Values the text states, ranked by how close they stand to a mention of the
 * field: same clause first, then same sentence, then (only when `anywhere`)
 * elsewhere in text order. Without `anywhere` a value must share a sentence
 * with the field's name to count at all. Questions state nothing ("Is the
 * budget 2000?"), so they are not searched.
 */
function rankByMention<T>(src: FillSource, name: string, find: (sentence: string) => Hit<T>[], anywhere: boolean): T[] {
  const words = fieldWords(name);
  const scored: { value: T; tier: number; distance: number; order: number }[] = [];
  src.statements.forEach((sentence, position) => {
    const cuts = clauseCuts(sentence);
    const mentions = mentionsOf(sentence, words);
    for (const hit of find(sentence)) {
      const near = mentions.filter((m) => clauseAt(cuts, m) === clauseAt(cuts, hit.index));
      const tier = near.length ? 0 : mentions.length ? 1 : 2;
      if (tier === 2 && !anywhere) continue;
      const distance = tier === 2 ? 0 : Math.min(...(near.length ? near : mentions).map((m) => Math.abs(m - hit.index)));
      scored.push({ value: hit.value, tier, distance, order: position * 100_000 + hit.index });
    }
  });
  return scored.sort((a, b) => a.tier - b.tier || a.distance - b.distance || a.order - b.order).map((s) => s.value);
}

// --- Numbers ----------------------------------------------------------------

/**
 * Standalone numbers only: "2000", "2,000", "-4", "1.5", "$300". Not glued to
 * letters or to other digits by separators ("3pm", "v2", "x86", "10:30",
 * "2024-05-01" do not count), so a time or a version is never read as a number.
 */
const NUMBER = /(?<![\w.,:/-])-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w]|[.,:/-]\d)/g;

function numbersIn(sentence: string): Hit<number>[] {
  return [...sentence.matchAll(NUMBER)].map((m) => ({ value: Number(m[0].replace(/,/g, '')), index: m.index! }));
}

/** Out-of-range numbers are rejected, never clamped; integer fields take only integers. */
function numberCandidates(schema: Schema, src: FillSource, name: string): number[] {
  return rankByMention(src, name, numbersIn, false).filter(
    (n) =>
      Number.isFinite(n) &&
      (schema.type !== 'integer' || Number.isInteger(n)) &&
      (typeof schema.minimum !== 'number' || n >= schema.minimum) &&
      (typeof schema.maximum !== 'number' || n <= schema.maximum),
  );
}

// --- Enums ------------------------------------------------------------------

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Case-insensitive, word-bounded: "high" matches "High priority", not "highway"; "in_progress" also matches "in progress". */
function wordPattern(value: string): RegExp {
  const body = /^[A-Za-z0-9]+(?:[\s_-]+[A-Za-z0-9]+)*$/.test(value) ? nameWords(value).map(escape).join('[\\s_-]*') : escape(value);
  return new RegExp(`(?<![A-Za-z0-9])${body}(?![A-Za-z0-9])`, 'gi');
}

/**
 * Only an enum value the text mentions; a string value may stand anywhere
 * (ranked by nearness to the field's name), a number or boolean only where a
 * number or boolean for this field would count. Never a default.
 */
function enumCandidates(values: unknown[], src: FillSource, name: string): unknown[] {
  const strings = values.filter((v): v is string => typeof v === 'string' && v.trim() !== '');
  const mentioned = rankByMention(src, name, (sentence) => strings.flatMap((v) => [...sentence.matchAll(wordPattern(v))].map((m) => ({ value: v as unknown, index: m.index! }))), true);
  const numbers = numberCandidates({}, src, name).filter((n) => values.includes(n));
  const booleans = booleanCandidates(src, name).filter((b) => values.includes(b));
  return [...mentioned, ...numbers, ...booleans];
}

// --- Booleans ---------------------------------------------------------------

const COPULA = /\b(?:(is|are|was|were)(\s+not)?|((?:is|are|was|were)n['’]t))\s+([A-Za-z0-9]+)/gi;

/**
 * Only what a sentence naming the field states: "<field>: yes/no/true/false",
 * "it is <field>" / "it is not <field>" / "isn't <field>". A sentence that says
 * both yes and no is ambiguous and gives nothing.
 */
function booleanCandidates(src: FillSource, name: string): boolean[] {
  const words = fieldWords(name);
  return src.statements.flatMap((sentence) => {
    if (mentionsOf(sentence, words).length === 0) return [];
    const stated = [...sentence.matchAll(COPULA)]
      .filter((m) => words.some((w) => sameWord(m[4]!.toLowerCase(), w)))
      .map((m) => !(m[2] || m[3]));
    if (stated.length) return stated;
    const yes = /\b(?:yes|true)\b/i.test(sentence);
    const no = /\b(?:no|false)\b/i.test(sentence);
    return yes === no ? [] : [yes];
  });
}

// --- Strings ----------------------------------------------------------------

/** Texts whose content is the source itself, by the (singular) word naming the field. */
const DERIVED: Record<string, (src: FillSource) => string[]> = {
  ...Object.fromEntries(['summary', 'description', 'answer', 'explanation', 'reason', 'overview'].map((w) => [w, leadingSentences])),
  ...Object.fromEntries(['body', 'content', 'text', 'message', 'note', 'detail'].map((w) => [w, (src: FillSource) => [src.sentences.join(' ')]])),
  ...Object.fromEntries(['title', 'topic', 'subject'].map((w) => [w, (src: FillSource) => src.phrases.slice(0, 1)])),
  question: (src) => src.questions,
};

/** Lists whose items come from the source, by the (singular) word naming the field. */
const LISTS: Record<string, (src: FillSource) => string[]> = {
  ...Object.fromEntries(['phrase', 'keyword', 'topic', 'tag'].map((w) => [w, (src: FillSource) => src.phrases])),
  ...Object.fromEntries(['item', 'point', 'step', 'task', 'action', 'risk'].map((w) => [w, (src: FillSource) => src.clauses])),
  question: (src) => src.questions,
  sentence: (src) => src.sentences,
};

/** The first sentence, then the first two, …: the shortest that meets a minLength wins. */
function leadingSentences(src: FillSource): string[] {
  return src.sentences.map((_, i) => src.sentences.slice(0, i + 1).join(' '));
}

/** The head noun of a field name that one of `table`'s entries knows ("action_items" → item). */
function derivedBy<T>(table: Record<string, T>, name: string): T | undefined {
  const word = nameWords(name).map(singular).reverse().find((w) => Object.hasOwn(table, w));
  return word === undefined ? undefined : table[word];
}

/**
 * Explicit statements of the field's value: "<field words>: X", "<field words>
 * is X", "<field words> = X". X runs to the end of the clause, or for a list to
 * the end of the sentence, split at commas and "and"/"or". Questions are not
 * statements, and "is not X" states no value.
 */
function statedValues(src: FillSource, name: string, list: boolean): string[] {
  const words = nameWords(name);
  const last = words.length - 1;
  const phrase = words.map((w, i) => (i === last ? `${escape(singular(w))}s?` : escape(w))).join('[\\s_-]+');
  const pattern = new RegExp(`(?<![A-Za-z0-9])${phrase}(?![A-Za-z0-9])\\s*(?::|=|\\s(?:is|are|was|were)\\s)\\s*(.+)$`, 'i');
  return src.statements.flatMap((sentence) => {
    const rest = pattern.exec(sentence)?.[1];
    if (!rest || /^not\b/i.test(rest)) return [];
    const end = list ? /;|[.!?](?=\s|$)/ : /[;,](?!\d)|[.!?](?=\s|$)|\s(?:but)\s/i;
    const stated = rest.split(end)[0]!;
    return (list ? stated.split(/,(?!\d)|\s+(?:and|or|&)\s+/i) : [stated]).map(unquote).filter(Boolean);
  });
}

function unquote(s: string): string {
  return tidy(s).replace(/^(["'“‘])(.*)["'”’]$/, '$2').trim();
}

/** Fits real text to the length bounds: cut at a word boundary when too long, nothing when too short (never padded). */
function fitted(text: string, schema: Schema): string | undefined {
  const max = schema.maxLength as number | undefined;
  const min = Math.max(1, (schema.minLength as number | undefined) ?? 0);
  let t = text.trim();
  if (max !== undefined && t.length > max) {
    const head = t.slice(0, max + 1);
    const space = head.lastIndexOf(' ');
    t = space > 0 ? tidy(head.slice(0, space)) : '';
  }
  return t.length >= min ? t : undefined;
}

function stringCandidates(schema: Schema, src: FillSource, name: string): string[] {
  const derived = derivedBy(DERIVED, name)?.(src) ?? [];
  return fitAll([...statedValues(src, name, false), ...derived], schema);
}

/** Items of a string array: stated lists first, then, for list-like names, phrases / clauses / questions of the source. */
function listCandidates(items: Schema, src: FillSource, name: string): string[] {
  const derived = derivedBy(LISTS, name)?.(src) ?? [];
  return fitAll([...statedValues(src, name, true), ...derived], items);
}

function fitAll(texts: string[], schema: Schema): string[] {
  return texts.map((t) => fitted(t, schema)).filter((t): t is string => t !== undefined);
}

function isEmpty(value: unknown): boolean {
  return typeof value === 'object' && value !== null && Object.keys(value).length === 0;
}

function unique<T>(values: T[]): T[] {
  const seen = new Set<string>();
  return values.filter((v) => {
    const key = typeof v === 'string' ? v.toLowerCase() : JSON.stringify(v);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
