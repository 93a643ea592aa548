// Grounded extraction: builds a value for a supported JSON Schema only from
// what the source text states, deterministically. It never guesses: a field the
// text holds no value for has no value, and a required one is reported as
// missing so the caller can refuse instead of inventing (no first enum value,
// no 0, no "3" out of "3pm", no padding, no clamping, never a `default` or an
// `examples` entry).
//
// Choices (anyOf, a discriminated oneOf, a type array) take the branch the
// text supports: the one with the most values the text states (a const counts
// when the text mentions it), the first in schema order on a tie. When the text
// supports no branch, a nullable choice is null, which is what "optional" means
// in the strict schemas clients send (all properties required, Optional as
// anyOf with null): the text states no value. A choice without null has no
// value then, so a required one is missing and refused as before. Local $refs
// are resolved.
import { analyzeObjective, tidy } from '../text/analyze.ts';
import { STOPWORDS } from '../text/stopwords.ts';
import { formatAccepts, resolveRef } from './schema-subset.ts';
import { escapeRegExp } from '../text/escape-regexp.ts';

type Schema = Record<string, unknown>;

export type FillResult = { ok: true; value: unknown } | { ok: false; missing: string[] };

/** A filled value with how many of its values the text states (0: only consts, nulls, empty lists). */
type Filled = { ok: true; value: unknown; grounded: number } | { ok: false; missing: string[] };

interface FillSource {
  sentences: string[];
  statements: string[];
  questions: string[];
  clauses: string[];
  phrases: string[];
}

/** The source and the schema's root (for $ref), with the $refs being followed (a recursive one has no value). */
interface Ctx {
  src: FillSource;
  root: Schema;
  refs: string[];
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
  const result = fill(schema, { src: sourceOf(source), root: schema, refs: [] }, name, '');
  return result.ok ? { ok: true, value: result.value } : result;
}

/** A `$ref` replaced by its definition (the referring schema's other keywords kept); a recursive one by nothing. */
export function deref<C extends Pick<Ctx, 'root' | 'refs'>>(schema: Schema, ctx: C): { schema: Schema; ctx: C } {
  let current = schema;
  let refs = ctx.refs;
  while (typeof current.$ref === 'string') {
    const ref = current.$ref;
    const target = refs.includes(ref) ? undefined : resolveRef(ctx.root, ref);
    const { $ref: _ref, ...rest } = current;
    if (!target) return { schema: { ...rest, anyOf: [] }, ctx };
    refs = [...refs, ref];
    current = { ...target, ...rest };
  }
  return { schema: current, ctx: refs === ctx.refs ? ctx : { ...ctx, refs } };
}

/** The alternatives of a choice: anyOf / oneOf branches or the types of a type array, each with the schema's other keywords. */
export function alternativesOf(schema: Schema): Schema[] | undefined {
  // A oneOf is accepted only as a discriminated union (schema-subset.ts), where it means what anyOf does.
  for (const keyword of ['anyOf', 'oneOf'] as const) {
    if (!Array.isArray(schema[keyword])) continue;
    const { [keyword]: branches, discriminator: _annotation, ...rest } = schema;
    return (branches as Schema[]).map((branch) => ({ ...rest, ...branch }));
  }
  if (Array.isArray(schema.type)) return (schema.type as string[]).map((type) => ({ ...schema, type }));
  return undefined;
}

export function isNull(schema: Schema): boolean {
  return schema.type === 'null' || schema.const === null || (Array.isArray(schema.enum) && schema.enum.length === 1 && schema.enum[0] === null);
}

function fill(raw: Schema, outer: Ctx, name: string, path: string): Filled {
  const { schema, ctx } = deref(raw, outer);
  const alternatives = alternativesOf(schema);
  if (alternatives) return fillChoice(alternatives, ctx, name, path);
  if (!isFixed(schema) && schema.type === 'object') return fillObject(schema, ctx, path);
  if (!isFixed(schema) && schema.type === 'array') return fillArray(schema, ctx, name, path);
  const [value] = candidates(schema, ctx, name);
  if (value !== undefined) return { ok: true, value, grounded: schema.const !== undefined ? Number(mentioned(schema.const, ctx.src)) : value === null ? 0 : 1 };
  // An enum that lists null: the text names none of its values, so it states none.
  if (Array.isArray(schema.enum) && schema.enum.includes(null)) return { ok: true, value: null, grounded: 0 };
  return { ok: false, missing: [path || name] };
}

/**
 * The branch with the most stated values (first on a tie); with none stated,
 * null when the choice allows it, a lone non-null branch's own result, else
 * missing. Between several branches, one whose discriminating consts (its own
 * const, or the consts of its direct properties) the text does not mention is
 * not taken: choosing it would be a guess. In a nullable choice, an object is
 * taken only when the text names the field, and an enum value only when a
 * sentence names it together with the field, so values stated for another
 * field ("The city is London" for `home`) do not make up an optional `work`.
 */
function fillChoice(alternatives: Schema[], ctx: Ctx, name: string, path: string): Filled {
  const nullable = alternatives.some(isNull);
  const branches = alternatives.filter((a) => !isNull(a));
  let best: Extract<Filled, { ok: true }> | undefined;
  for (const raw of branches) {
    const { schema: branch, ctx: inner } = deref(raw, ctx);
    if (branches.length > 1 && !discriminators(branch, inner).every((c) => mentioned(c, ctx.src))) continue;
    const result = fill(branch, inner, name, path);
    if (!result.ok || result.grounded === 0) continue;
    if (nullable && !namedWith(result.value, branch, name, ctx.src)) continue;
    if (!best || result.grounded > best.grounded) best = result;
  }
  if (best) return best;
  if (nullable) return { ok: true, value: null, grounded: 0 };
  if (branches.length === 1) return fill(branches[0]!, ctx, name, path);
  return { ok: false, missing: [path || name] };
}

/** The const values that tell a branch apart: its own, or those of its direct properties. */
function discriminators(branch: Schema, ctx: Ctx): unknown[] {
  if (branch.const !== undefined) return [branch.const];
  return Object.values((branch.properties ?? {}) as Record<string, Schema>)
    .map((p) => deref(p, ctx).schema.const)
    .filter((c) => c !== undefined);
}

/** Whether an optional (nullable) value is tied to its field by the text. */
function namedWith(value: unknown, branch: Schema, name: string, src: FillSource): boolean {
  const words = fieldWords(name);
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return src.statements.some((s) => mentionsOf(s, words).length > 0);
  if (typeof value === 'string' && isFixed(branch)) return src.statements.some((s) => mentionsOf(s, words).length > 0 && wordPattern(value).test(s));
  return true;
}

/** Optional properties without a value are left out; a required one without a value leaves the object without one. */
function fillObject(schema: Schema, ctx: Ctx, path: string): Filled {
  const required = new Set((schema.required ?? []) as string[]);
  const value: Record<string, unknown> = {};
  const missing: string[] = [];
  let grounded = 0;
  for (const [key, child] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) {
    const result = fill(child, ctx, key, path ? `${path}.${key}` : key);
    if (result.ok) {
      value[key] = result.value;
      grounded += result.grounded;
    } else if (required.has(key)) missing.push(...result.missing);
  }
  return missing.length ? { ok: false, missing } : { ok: true, value, grounded };
}

/** A schema whose values are listed by the schema itself (const, enum), whatever its type. */
function isFixed(schema: Schema): boolean {
  return schema.const !== undefined || schema.enum !== undefined;
}

function fillArray(schema: Schema, ctx: Ctx, name: string, path: string): Filled {
  const { schema: items, ctx: inner } = deref((schema.items ?? {}) as Schema, ctx);
  // Free-text items come from stated lists or list-like sources; any other item schema from its own candidates.
  const free = items.type === 'string' && !isFixed(items) && !alternativesOf(items);
  const found = unique(free ? listCandidates(items, inner.src, name) : candidates(items, inner, name));
  const value = found.slice(0, (schema.maxItems as number | undefined) ?? found.length);
  if (value.length < ((schema.minItems as number | undefined) ?? 0)) return { ok: false, missing: [path || name] };
  return { ok: true, value, grounded: value.length };
}

/** Every grounded value for one field, best first; empty when the text states none. */
function candidates(raw: Schema, outer: Ctx, name: string): unknown[] {
  const { schema, ctx } = deref(raw, outer);
  const src = ctx.src;
  // The schema's own value, not an invented one.
  if (schema.const !== undefined) return [schema.const];
  if (Array.isArray(schema.enum)) return enumCandidates(schema.enum, src, name);
  if (alternativesOf(schema) || schema.type === 'object' || schema.type === 'array') {
    // As a list item, a result that states nothing (only consts, nulls, empty lists) is no item at all.
    const result = fill(schema, ctx, name, name);
    return result.ok && result.grounded > 0 ? [result.value] : [];
  }
  switch (schema.type) {
    case 'string':
      return stringCandidates(schema, src, name);
    case 'integer':
    case 'number':
      return numberCandidates(schema, src, name);
    case 'boolean':
      return booleanCandidates(src.statements, name);
    case 'null':
      return [null];
    default:
      return [];
  }
}

/** Whether the text names a const string value (word-bounded, like an enum value). */
function mentioned(value: unknown, src: FillSource): boolean {
  return typeof value === 'string' && value.trim() !== '' && src.statements.some((s) => wordPattern(value).test(s));
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
export function fieldWords(name: string): string[] {
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
export function sameWord(a: string, b: string): boolean {
  if (a === b) return true;
  const shorter = Math.min(a.length, b.length);
  if (shorter < 4) return false;
  let shared = 0;
  while (shared < shorter && a[shared] === b[shared]) shared += 1;
  return shared >= 4 && shared >= shorter - 2;
}

/** Character indexes of the words in `sentence` that name the field. */
export function mentionsOf(sentence: string, words: string[]): number[] {
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

export function numbersIn(sentence: string): Hit<number>[] {
  return [...sentence.matchAll(NUMBER)].map((m) => ({ value: Number(m[0].replace(/,/g, '')), index: m.index! }));
}

/** Out-of-range numbers are rejected, never clamped; integer fields take only integers. */
function numberCandidates(schema: Schema, src: FillSource, name: string): number[] {
  return rankByMention(src, name, numbersIn, false).filter(
    (n) =>
      Number.isFinite(n) &&
      (schema.type !== 'integer' || Number.isInteger(n)) &&
      (typeof schema.minimum !== 'number' || n >= schema.minimum) &&
      (typeof schema.maximum !== 'number' || n <= schema.maximum) &&
      (typeof schema.exclusiveMinimum !== 'number' || n > schema.exclusiveMinimum) &&
      (typeof schema.exclusiveMaximum !== 'number' || n < schema.exclusiveMaximum),
  );
}

// --- Enums ------------------------------------------------------------------

/** Case-insensitive, word-bounded: "high" matches "High priority", not "highway"; "in_progress" also matches "in progress". */
export function wordPattern(value: string): RegExp {
  const body = /^[A-Za-z0-9]+(?:[\s_-]+[A-Za-z0-9]+)*$/.test(value) ? nameWords(value).map(escape).join('[\\s_-]*') : escapeRegExp(value);
  return new RegExp(`(?<![A-Za-z0-9])${body}(?![A-Za-z0-9])`, 'gi');
}

/**
 * Only an enum value the text mentions; a string value may stand anywhere
 * (ranked by nearness to the field's name), a number or boolean only where a
 * number or boolean for this field would count. Never a default.
 */
function enumCandidates(values: unknown[], src: FillSource, name: string): unknown[] {
  const strings = values.filter((v): v is string => typeof v === 'string' && v.trim() !== '');
  const mentioned = rankByMention(
    src,
    name,
    (sentence) => strings.flatMap((v) => [...sentence.matchAll(wordPattern(v))].map((m) => ({ value: v as unknown, index: m.index! }))),
    true,
  );
  const numbers = numberCandidates({}, src, name).filter((n) => values.includes(n));
  const booleans = booleanCandidates(src.statements, name).filter((b) => values.includes(b));
  return [...mentioned, ...numbers, ...booleans];
}

// --- Booleans ---------------------------------------------------------------

const COPULA = /\b(?:(is|are|was|were)(\s+not)?|((?:is|are|was|were)n['’]t))\s+([A-Za-z0-9]+)/gi;

/**
 * Only what a sentence naming the field states: "<field>: yes/no/true/false",
 * "it is <field>" / "it is not <field>" / "isn't <field>". A sentence that says
 * both yes and no is ambiguous and gives nothing.
 */
export function booleanCandidates(statements: string[], name: string): boolean[] {
  const words = fieldWords(name);
  return statements.flatMap((sentence) => {
    if (mentionsOf(sentence, words).length === 0) return [];
    const stated = [...sentence.matchAll(COPULA)].filter((m) => words.some((w) => sameWord(m[4]!.toLowerCase(), w))).map((m) => !(m[2] || m[3]));
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
  const word = nameWords(name)
    .map(singular)
    .reverse()
    .find((w) => Object.hasOwn(table, w));
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
  const phrase = words.map((w, i) => (i === last ? `${escapeRegExp(singular(w))}s?` : escapeRegExp(w))).join('[\\s_-]+');
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
  return tidy(s)
    .replace(/^(["'“‘])(.*)["'”’]$/, '$2')
    .trim();
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

/** Stated texts that fit the length bounds and, with a `format`, meet it as stated (a date is not made up from "tomorrow"). */
function fitAll(texts: string[], schema: Schema): string[] {
  return texts
    .map((t) => fitted(t, schema))
    .filter((t): t is string => t !== undefined && (typeof schema.format !== 'string' || formatAccepts(schema.format, t)));
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
