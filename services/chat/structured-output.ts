// Structured output: the content of an answer with response_format must parse
// and validate against the requested schema (checked by Ajv). Anything else
// becomes a refusal, never invalid JSON.
import Ajv from 'ajv';
import type { ChatOutput } from '../../domain/chat/types.ts';

const ajv = new Ajv.default({ strict: false, allErrors: false });

export const STRUCTURED_REFUSAL = 'I could not produce an answer that satisfies the requested JSON schema.';

export function validatesAgainst(schema: Record<string, unknown>, value: unknown): boolean {
  return ajv.validate(schema, value) === true;
}

/** Keeps a valid JSON answer; turns anything else into a refusal. */
export function enforceSchema(schema: Record<string, unknown>, output: ChatOutput): ChatOutput {
  if (output.refusal || output.content === null) return output;
  try {
    if (validatesAgainst(schema, JSON.parse(output.content))) return output;
  } catch {}
  return { content: null, refusal: STRUCTURED_REFUSAL, finishReason: 'content_filter' };
}
