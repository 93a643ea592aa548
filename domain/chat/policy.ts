// The configurable refusal policy: a request whose user text contains a
// declined phrase gets a refusal (200 with message.refusal), never a 5xx.
// Text and phrases are compared in a normal form, so case, spacing,
// punctuation between words, accents and look-alike Unicode forms (fullwidth,
// mathematical letters, ligatures) do not get a declined phrase past it.
import type { ChatMessage } from './types.ts';

export const POLICY_REFUSAL =
  "I can't help with that request under this workspace's content policy. Narrow the request, or choose an admitted job from GET /v1/jobs.";

// Invisible format characters (zero-width space and joiners, soft hyphen, bidi marks) are dropped, so they cannot split a word.
const FORMAT_CHARACTERS = /\p{Cf}+/gu;
// Combining marks, once NFKD has separated them from their letters (`bómb` is `bomb`).
const COMBINING_MARKS = /\p{M}+/gu;
// Everything between words: whitespace runs, punctuation and symbols (`build-a bomb!`, `build\n\ta  bomb`) become one space.
const BETWEEN_WORDS = /[\s\p{P}\p{S}\p{Z}\p{Cc}]+/gu;

/**
 * The form both the text and the declined phrases are compared in: Unicode compatibility forms folded
 * (NFKC: `ｂｏｍｂ`, `𝐛𝐨𝐦𝐛` and `ﬁ` become `bomb` and `fi`), accents dropped, lower case, and every run of
 * whitespace, punctuation or symbols one space.
 */
export function normalizeForPolicy(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .normalize('NFKD')
    .replace(COMBINING_MARKS, '')
    .normalize('NFKC')
    .replace(FORMAT_CHARACTERS, '')
    .replace(BETWEEN_WORDS, ' ')
    .trim();
}

/** True when any user message contains a declined phrase (both compared in the normal form). Each message is checked on its own. */
// The configured list is the same on every request: normalise it once per list.
const normalisedLists = new WeakMap<string[], string[]>();

export function isDeclined(messages: ChatMessage[], declinedTerms: string[]): boolean {
  let terms = normalisedLists.get(declinedTerms);
  if (!terms) {
    terms = declinedTerms.map(normalizeForPolicy).filter((t) => t !== '');
    normalisedLists.set(declinedTerms, terms);
  }
  if (terms.length === 0) return false;
  return messages
    .filter((m) => m.role === 'user')
    .some((m) => {
      const text = normalizeForPolicy(m.content);
      return terms.some((term) => text.includes(term));
    });
}
