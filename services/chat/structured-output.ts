// Structured output: the content of an answer with response_format must parse
// and meet it: for json_schema, validate against the requested schema (the
// validator Ajv compiled when the request was checked against the subset); for
// json_object, be a JSON object. Anything else becomes a refusal, never invalid
// JSON and never an invented value. A model's json_schema answer is then held
// to the request's text (domain/chat/grounded-values.ts): a required value the
// text does not state makes it a refusal naming the field; an optional one is
// dropped (null when nullable).
//
// Refusals here finish with 'stop', as a model's own refusal does: the official
// openai client's chat.completions.parse() throws ContentFilterFinishReasonError
// on 'content_filter' (and LengthFinishReasonError on 'length') before it reads
// the message, so only 'stop' lets it surface message.refusal. 'content_filter'
// stays reserved for the content-policy refusal.
import { groundedValues } from '../../domain/chat/grounded-values.ts';
import { validatorFor } from '../../domain/chat/schema-subset.ts';
import type { ChatOutput, ResponseFormat } from '../../domain/chat/types.ts';

export const STRUCTURED_REFUSAL = 'I could not produce an answer that satisfies the requested JSON schema.';
export const JSON_OBJECT_REFUSAL = 'I could not produce an answer that is a JSON object.';

/** Names the fields the text holds no value for, and quotes none of the text. */
export function ungroundedRefusal(missing: string[]): string {
  return `The provided text holds no value for the required field(s): ${[...new Set(missing)].join(', ')}. Nothing was guessed; add the information and ask again.`;
}

/** Whether `value` validates against `schema` (a schema outside the subset validates nothing). */
export function validatesAgainst(schema: Record<string, unknown>, value: unknown): boolean {
  return validatorFor(schema)?.(value) === true;
}

function parsed(content: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(content) };
  } catch {
    return { ok: false };
  }
}

/** Keeps a valid JSON answer; turns anything else into a refusal. */
export function enforceSchema(schema: Record<string, unknown>, output: ChatOutput): ChatOutput {
  if (output.refusal || output.content === null) return output;
  const answer = parsed(output.content);
  if (answer.ok && validatesAgainst(schema, answer.value)) return output;
  return refusalOf(output, STRUCTURED_REFUSAL);
}

/** The JSON object `content` holds, if it is one (a cut-off object does not parse, so it is none). */
export function jsonObjectOf(content: string): Record<string, unknown> | undefined {
  const answer = parsed(content);
  if (answer.ok && typeof answer.value === 'object' && answer.value !== null && !Array.isArray(answer.value)) return answer.value as Record<string, unknown>;
  return undefined;
}

/** Keeps an answer that is a JSON object; turns anything else into a refusal. */
export function enforceJsonObject(output: ChatOutput): ChatOutput {
  if (output.refusal || output.content === null) return output;
  if (jsonObjectOf(output.content)) return output;
  return refusalOf(output, JSON_OBJECT_REFUSAL);
}

/** The service's refusal in place of an answer; the tokens the provider used for that answer are still billed as reported. */
function refusalOf(output: ChatOutput, refusal: string): ChatOutput {
  return { content: null, refusal, finishReason: 'stop', ...(output.usage ? { usage: output.usage } : {}) };
}

/**
 * Keeps a valid answer's values that `source` states: a required one it does not state makes the
 * answer a refusal naming the field(s); optional ones are left out, or null when nullable, as long
 * as what is left still validates (else a refusal naming them).
 */
export function enforceGrounding(schema: Record<string, unknown>, name: string, output: ChatOutput, source: string): ChatOutput {
  if (output.refusal || output.content === null) return output;
  const answer = parsed(output.content);
  if (!answer.ok) return output;
  const grounded = groundedValues(schema, answer.value, source, name);
  if (!grounded.ok) return refusalOf(output, ungroundedRefusal(grounded.missing));
  if (grounded.dropped.length === 0) return output;
  if (!validatesAgainst(schema, grounded.value)) return refusalOf(output, ungroundedRefusal(grounded.dropped.map((p) => p.replace(/\[\d+\]/g, ''))));
  return { ...output, content: JSON.stringify(grounded.value) };
}

/**
 * Holds the answer to the response format; with `source` (a provider whose answers are a model's),
 * a json_schema answer's values are also held to that text.
 */
export function enforceResponseFormat(format: ResponseFormat, output: ChatOutput, source?: string): ChatOutput {
  if (format.kind === 'json_object') return enforceJsonObject(output);
  const valid = enforceSchema(format.schema, output);
  return source === undefined ? valid : enforceGrounding(format.schema, format.name, valid, source);
}

/**
 * OpenAI's wire form of a response format, for an OpenAI-compatible upstream:
 * the schema as the client sent it, with its description, and strict as the
 * client set it (true when it did not: the answer is held to the schema anyway).
 */
export function wireResponseFormat(format: ResponseFormat) {
  if (format.kind === 'json_object') return { type: 'json_object' as const };
  const { name, schema, description, strict } = format;
  return { type: 'json_schema' as const, json_schema: { name, ...(description !== undefined ? { description } : {}), schema, strict: strict ?? true } };
}
