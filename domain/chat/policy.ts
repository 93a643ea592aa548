// The configurable refusal policy: a request whose user text contains a
// declined phrase gets a refusal (200 with message.refusal), never a 5xx.
import type { ChatMessage } from './types.ts';

export const POLICY_REFUSAL =
  'I can\'t help with that request under this workspace\'s content policy. Narrow the request, or choose an admitted job from GET /v1/jobs.';

export function isDeclined(messages: ChatMessage[], declinedTerms: string[]): boolean {
  const text = messages.filter((m) => m.role === 'user').map((m) => m.content.toLowerCase()).join('\n');
  return declinedTerms.some((term) => text.includes(term));
}
