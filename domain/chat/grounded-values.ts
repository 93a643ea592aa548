// The grounding check of a model's structured answer: the answer validated
// against its schema, and now each value it states must come from the source
// text of the request (its user, system, developer and tool messages, recalled
// memory, the linked document), so a model cannot pass off an invented value.
// fill-schema.ts builds values from the text (the local provider); this checks
// values a model built, with the same reading of the text.
//
// A value is grounded when:
// - a string: each of its sentences is a contiguous span of the text, or has
//   its content words (stopwords aside, negations kept) all in one sentence of
//   the text, compared normalised (case, accents, whitespace, punctuation) and
//   up to inflection ("meetings" / "meeting"). An empty string states nothing.
// - a number: the text has that number, standalone ("12", "12.0", "12%",
//   "1,000", "$300"), as the digits of a token ("2024" in "2024-05-01", "2" in
//   "v2") or as a number word ("three"). A numeric string the same way.
// - a boolean: the text states it about the field ("urgent: yes", "it is not
//   urgent"), or mentions the field (even in a question) without stating the
//   opposite: the text raised it, so the answer decides it, it does not make it up.
// - an enum value: the text mentions it (questions included: "is it a complaint
//   or a compliment?" offers both), or it is the schema's only (non-null) choice.
//   A classification whose labels the text never names is an inference, not a
//   stated value, and does not pass.
// - a const, or null: the schema forces it, or it states nothing.
//
// Ungrounded values: a required, non-nullable one makes the answer missing that
// field (the caller refuses, naming it); a nullable one becomes null (what
// Optional means in strict schemas); a property that is not required is
// dropped; an array item is dropped (the array is missing when fewer than
// minItems stay). The caller validates what is left against the schema again.
import { sentencesOf } from '../text/analyze.ts';
import { STOPWORDS } from '../text/stopwords.ts';
import { alternativesOf, booleanCandidates, deref, fieldWords, isNull, mentionsOf, numbersIn, sameWord, wordPattern } from './fill-schema.ts';
import { normalizeForPolicy } from './policy.ts';
import type { ChatRequest } from './types.ts';

type Schema = Record<string, unknown>;

export type GroundedAnswer =
  /** `dropped`: where an ungrounded value was left out or set to null (array items as `name[i]`). */
  { ok: true; value: unknown; dropped: string[] } | { ok: false; missing: string[] };

/** Recalled memory and the linked document as text the answer may be grounded in (the local provider fills from them too). */
export function groundingTexts(grounding: ChatRequest['grounding']): string[] {
  return [...grounding.memory.map((m) => `${m.subject}. ${m.content}`), ...(grounding.document ? [grounding.document] : [])];
}

/** The text a model's answer must be grounded in: what the request's user, system, developer and tool messages say, and its grounding. */
export function groundingSourceOf(request: Pick<ChatRequest, 'messages' | 'grounding'>): string {
  return [...request.messages.filter((m) => m.role !== 'assistant').map((m) => m.content), ...groundingTexts(request.grounding)].filter(Boolean).join('\n');
}

/** The schema's root (for $ref) and the $refs being followed. */
interface Ctx {
  root: Schema;
  refs: string[];
}

/** The source, read once: its sentences, each sentence's normalised words, the numbers it has. */
interface Source {
  sentences: string[];
  /** Sentences that are not questions: what the text states. */
  statements: string[];
  /** The whole text normalised, padded with spaces, for span matching. */
  padded: string;
  /** Each sentence's normalised words. */
  sentenceWords: Set<string>[];
  /** The text's words that are a value's word up to inflection (sameWord), by that word; filled as values are checked. */
  variants: Map<string, string[]>;
  vocabulary: string[];
  numbers: Set<number>;
  /** The whole text, for enum mentions (questions included). */
  text: string;
}

const NEGATIONS = new Set(['no', 'not', 'nor', 'never', 'without', 'cannot']);

const NUMBER_WORDS = [
  'zero',
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
  'ten',
  'eleven',
  'twelve',
  'thirteen',
  'fourteen',
  'fifteen',
  'sixteen',
  'seventeen',
  'eighteen',
  'nineteen',
  'twenty',
];
const TENS: Record<string, number> = { thirty: 30, forty: 40, fifty: 50, sixty: 60, seventy: 70, eighty: 80, ninety: 90, hundred: 100, thousand: 1000 };

const wordsIn = (text: string): string[] => normalizeForPolicy(text).split(' ').filter(Boolean);

function numbersOf(text: string, words: string[]): Set<number> {
  const found = new Set<number>(numbersIn(text).map((h) => h.value));
  // The digits of a token: 2024 in 2024-05-01, 2 in v2, 10 and 30 in 10:30.
  for (const m of text.matchAll(/\d+(?:\.\d+)?/g)) found.add(Number(m[0]));
  for (const w of words) {
    const small = NUMBER_WORDS.indexOf(w);
    if (small >= 0) found.add(small);
    if (TENS[w] !== undefined) found.add(TENS[w]);
  }
  return found;
}

function read(text: string): Source {
  const sentences = sentencesOf(text);
  const words = wordsIn(text);
  return {
    sentences,
    statements: sentences.filter((s) => !s.endsWith('?')),
    padded: ` ${words.join(' ')} `,
    sentenceWords: sentences.map((s) => new Set(wordsIn(s))),
    variants: new Map(),
    vocabulary: [...new Set(words)],
    numbers: numbersOf(text, words),
    text,
  };
}

/** A sentence of a value: a span of the text, or its content words all in one sentence of the text. */
function sentenceGrounded(sentence: string, source: Source): boolean {
  const words = wordsIn(sentence);
  if (words.length === 0) return false;
  if (source.padded.includes(` ${words.join(' ')} `)) return true;
  const content = words.filter((w) => !STOPWORDS.has(w) || NEGATIONS.has(w));
  if (content.length === 0) return false;
  const variants = content.map((w) => variantsOf(w, source));
  // A word the text never has: no sentence to look in.
  if (variants.some((v) => v.length === 0)) return false;
  return source.sentenceWords.some((said) => variants.every((v) => v.some((w) => said.has(w))));
}

function variantsOf(word: string, source: Source): string[] {
  let found = source.variants.get(word);
  if (!found) {
    found = source.vocabulary.filter((v) => sameWord(v, word));
    source.variants.set(word, found);
  }
  return found;
}

function stringGrounded(value: string, source: Source): boolean {
  if (value.trim() === '') return false;
  const numeric = value.trim().replace(/,(?=\d{3}\b)/g, '');
  if (/^-?\d+(?:\.\d+)?$/.test(numeric) && source.numbers.has(Number(numeric))) return true;
  const sentences = sentencesOf(value);
  return sentences.length > 0 && sentences.every((s) => sentenceGrounded(s, source));
}

function booleanGrounded(value: boolean, source: Source, name: string): boolean {
  const stated = booleanCandidates(source.statements, name);
  if (stated.includes(value)) return true;
  if (stated.length) return false;
  const words = fieldWords(name);
  return source.sentences.some((s) => mentionsOf(s, words).length > 0);
}

function enumGrounded(value: unknown, choices: unknown[], source: Source, name: string): boolean {
  if (choices.filter((c) => c !== null).length === 1) return true;
  if (typeof value === 'string') return value.trim() !== '' && wordPattern(value).test(source.text);
  return leafGrounded(value, source, name);
}

function leafGrounded(value: unknown, source: Source, name: string): boolean {
  if (typeof value === 'string') return stringGrounded(value, source);
  if (typeof value === 'number') return source.numbers.has(value);
  if (typeof value === 'boolean') return booleanGrounded(value, source, name);
  return false;
}

type Walked = { ok: true; value: unknown; dropped: string[] } | { ok: false; missing: string[] };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function nullable(schema: Schema): boolean {
  return (alternativesOf(schema)?.some(isNull) ?? false) || (Array.isArray(schema.enum) && schema.enum.includes(null));
}

/** Whether a value has the shape of a branch: its type, const or enum, and for an object its consts and required keys. */
function fits(branch: Schema, value: unknown, ctx: Ctx): boolean {
  if (branch.const !== undefined) return JSON.stringify(branch.const) === JSON.stringify(value);
  if (Array.isArray(branch.enum)) return branch.enum.some((e) => JSON.stringify(e) === JSON.stringify(value));
  const kind = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
  const type = branch.type;
  if (type !== undefined && type !== kind && !(type === 'integer' && Number.isInteger(value))) return false;
  if (!isObject(value)) return true;
  const properties = (branch.properties ?? {}) as Record<string, Schema>;
  if (((branch.required ?? []) as string[]).some((k) => !Object.hasOwn(value, k))) return false;
  return Object.entries(properties).every(([k, p]) => {
    const c = deref(p, ctx).schema.const;
    return c === undefined || !Object.hasOwn(value, k) || JSON.stringify(c) === JSON.stringify(value[k]);
  });
}

function walk(raw: Schema, value: unknown, outer: Ctx, source: Source, name: string, path: string): Walked {
  const { schema, ctx } = deref(raw, outer);
  const result = check(schema, value, ctx, source, name, path);
  // Optional in a strict schema: the text states no value, so none.
  if (!result.ok && nullable(schema)) return { ok: true, value: null, dropped: [path || name] };
  return result;
}

function check(schema: Schema, value: unknown, ctx: Ctx, source: Source, name: string, path: string): Walked {
  // A value the schema forces, or null: nothing is claimed.
  if (value === null || schema.const !== undefined) return { ok: true, value, dropped: [] };
  const alternatives = alternativesOf(schema);
  if (alternatives) {
    const branch = alternatives.find((b) => !isNull(b) && fits(deref(b, ctx).schema, value, ctx));
    return branch ? walk(branch, value, ctx, source, name, path) : check({}, value, ctx, source, name, path);
  }
  if (Array.isArray(schema.enum))
    return enumGrounded(value, schema.enum, source, name) ? { ok: true, value, dropped: [] } : { ok: false, missing: [path || name] };
  if (isObject(value)) return checkObject(schema, value, ctx, source, path);
  if (Array.isArray(value)) return checkArray(schema, value, ctx, source, name, path);
  return leafGrounded(value, source, name) ? { ok: true, value, dropped: [] } : { ok: false, missing: [path || name] };
}

function checkObject(schema: Schema, value: Record<string, unknown>, ctx: Ctx, source: Source, path: string): Walked {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const required = new Set((schema.required ?? []) as string[]);
  const kept: Record<string, unknown> = {};
  const dropped: string[] = [];
  const missing: string[] = [];
  for (const [key, v] of Object.entries(value)) {
    const at = path ? `${path}.${key}` : key;
    const result = walk(Object.hasOwn(properties, key) ? properties[key]! : {}, v, ctx, source, key, at);
    if (result.ok) {
      kept[key] = result.value;
      dropped.push(...result.dropped);
    } else if (required.has(key)) missing.push(...result.missing);
    else dropped.push(at);
  }
  return missing.length ? { ok: false, missing } : { ok: true, value: kept, dropped };
}

function checkArray(schema: Schema, value: unknown[], ctx: Ctx, source: Source, name: string, path: string): Walked {
  const items = (schema.items ?? {}) as Schema;
  const kept: unknown[] = [];
  const dropped: string[] = [];
  value.forEach((item, i) => {
    const result = walk(items, item, ctx, source, name, `${path || name}[${i}]`);
    if (result.ok) {
      kept.push(result.value);
      dropped.push(...result.dropped);
    } else dropped.push(`${path || name}[${i}]`);
  });
  if (kept.length < ((schema.minItems as number | undefined) ?? 0)) return { ok: false, missing: [path || name] };
  return { ok: true, value: kept, dropped };
}

/**
 * Checks every value of `value` (an answer that validates against `schema`) against `source`:
 * the answer with ungrounded optional values dropped or null, or the required fields the text
 * holds no value for. `name` names the root (the response format's name).
 */
export function groundedValues(schema: Schema, value: unknown, source: string, name = 'value'): GroundedAnswer {
  const text = read(source);
  return walk(schema, value, { root: schema, refs: [] }, text, name, '');
}
