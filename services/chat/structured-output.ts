// Structured output: the content of an answer with response_format must parse
// and meet it: for json_schema, validate against the requested schema (the
// validator Ajv compiled when the request was checked against the subset); for
// json_object, be a JSON object. Anything else becomes a refusal, never invalid
// JSON and never an invented value.
//
// Refusals here finish with 'stop', as a model's own refusal does: the official
// openai client's chat.completions.parse() throws ContentFilterFinishReasonError
// on 'content_filter' (and LengthFinishReasonError on 'length') before it reads
// the message, so only 'stop' lets it surface message.refusal. 'content_filter'
// stays reserved for the content-policy refusal.
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

/** Keeps an answer that is a JSON object; turns anything else into a refusal. */
export function enforceJsonObject(output: ChatOutput): ChatOutput {
  if (output.refusal || output.content === null) return output;
  const answer = parsed(output.content);
  if (answer.ok && typeof answer.value === 'object' && answer.value !== null && !Array.isArray(answer.value)) return output;
  return refusalOf(output, JSON_OBJECT_REFUSAL);
}

/** The service's refusal in place of an answer; the tokens the provider used for that answer are still billed as reported. */
function refusalOf(output: ChatOutput, refusal: string): ChatOutput {
  return { content: null, refusal, finishReason: 'stop', ...(output.usage ? { usage: output.usage } : {}) };
}

export function enforceResponseFormat(format: ResponseFormat, output: ChatOutput): ChatOutput {
  return format.kind === 'json_object' ? enforceJsonObject(output) : enforceSchema(format.schema, output);
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
