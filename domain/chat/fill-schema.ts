// Builds a value for a supported JSON Schema from text the answer is grounded
// in (key phrases, sentences, numbers), deterministically. The caller still
// validates the value; when it cannot be made valid the answer is a refusal.
import { analyzeObjective, truncate } from '../text/analyze.ts';

type Schema = Record<string, unknown>;

export interface FillSource {
  phrases: string[];
  sentences: string[];
  numbers: number[];
}

export function fillSourceOf(text: string): FillSource {
  const facts = analyzeObjective(text);
  const numbers = (text.match(/-?\d+(?:\.\d+)?/g) ?? []).map(Number).filter((n) => Number.isFinite(n));
  return { phrases: facts.keyTerms.map((k) => k.term), sentences: facts.sentences, numbers };
}

function pickString(name: string, s: Schema, src: FillSource, index: number): string {
  const lower = name.toLowerCase();
  let text: string;
  if (/(summary|description|answer|text|content|explanation|reason|body|message)/.test(lower)) {
    text = src.sentences[index % Math.max(1, src.sentences.length)] ?? src.phrases.join(', ');
  } else {
    text = src.phrases[index % Math.max(1, src.phrases.length)] ?? src.sentences[0] ?? name;
  }
  const min = (s.minLength as number | undefined) ?? 0;
  const max = (s.maxLength as number | undefined) ?? 2_000;
  text = truncate(text || name, Math.max(1, max));
  while (text.length < min) text = `${text} ${text || name}`.slice(0, Math.max(min, 1));
  return text.slice(0, max);
}

function pickNumber(s: Schema, src: FillSource, index: number, integer: boolean): number {
  let n = src.numbers[index % Math.max(1, src.numbers.length)] ?? 0;
  if (integer) n = Math.round(n);
  if (typeof s.minimum === 'number' && n < s.minimum) n = integer ? Math.ceil(s.minimum) : s.minimum;
  if (typeof s.maximum === 'number' && n > s.maximum) n = integer ? Math.floor(s.maximum) : s.maximum;
  return n;
}

export function fillSchema(schema: Schema, src: FillSource, name = 'value', index = 0): unknown {
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum)) {
    const text = src.sentences.join(' ').toLowerCase();
    return schema.enum.find((v) => typeof v === 'string' && text.includes(v.toLowerCase())) ?? schema.enum[0];
  }
  switch (schema.type) {
    case 'object': {
      const props = (schema.properties ?? {}) as Record<string, Schema>;
      return Object.fromEntries(Object.entries(props).map(([key, child], i) => [key, fillSchema(child, src, key, index + i)]));
    }
    case 'array': {
      const min = (schema.minItems as number | undefined) ?? 1;
      const max = (schema.maxItems as number | undefined) ?? 5;
      const want = Math.min(max, Math.max(min, Math.min(3, src.phrases.length || 1)));
      return Array.from({ length: want }, (_, i) => fillSchema(schema.items as Schema, src, name, index + i));
    }
    case 'string':
      return pickString(name, schema, src, index);
    case 'integer':
      return pickNumber(schema, src, index, true);
    case 'number':
      return pickNumber(schema, src, index, false);
    case 'boolean':
      return src.sentences.some((s) => /\b(yes|true|should|must)\b/i.test(s));
    default:
      return null;
  }
}
