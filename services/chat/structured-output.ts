// Structured output: the content of an answer with response_format must parse
// and validate against the requested schema (checked by Ajv). Anything else
// becomes a refusal, never invalid JSON and never an invented value.
//
// Refusals here finish with 'stop', as a model's own refusal does: the official
// openai client's chat.completions.parse() throws ContentFilterFinishReasonError
// on 'content_filter' (and LengthFinishReasonError on 'length') before it reads
// the message, so only 'stop' lets it surface message.refusal. 'content_filter'
// stays reserved for the content-policy refusal.
import Ajv from 'ajv';
import type { ChatOutput } from '../../domain/chat/types.ts';

const ajv = new Ajv.default({ strict: false, allErrors: false });

export const STRUCTURED_REFUSAL = 'I could not produce an answer that satisfies the requested JSON schema.';

/** Names the fields the text holds no value for, and quotes none of the text. */
export function ungroundedRefusal(missing: string[]): string {
  return `The provided text holds no value for the required field(s): ${[...new Set(missing)].join(', ')}. Nothing was guessed; add the information and ask again.`;
}

export function validatesAgainst(schema: Record<string, unknown>, value: unknown): boolean {
  return ajv.validate(schema, value) === true;
}

/** Keeps a valid JSON answer; turns anything else into a refusal. */
export function enforceSchema(schema: Record<string, unknown>, output: ChatOutput): ChatOutput {
  if (output.refusal || output.content === null) return output;
  try {
    if (validatesAgainst(schema, JSON.parse(output.content))) return output;
  } catch {}
  return { content: null, refusal: STRUCTURED_REFUSAL, finishReason: 'stop' };
}
