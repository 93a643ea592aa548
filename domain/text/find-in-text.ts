// Exact reading of what a text states: the items of a list it gives, and the email addresses, web
// addresses and phone numbers written in it. Pure and deterministic, so a tool built on them
// (count_list_items, find_contact_details) answers what a small model gets wrong ("14 items" for
// four), and verification derives the same answer again.
import { sentencesOf } from './analyze.ts';

const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g;
const URL = /\b(?:https?:\/\/|www\.)[^\s<>"'`]+/gi;
// Digit groups with separators: "555-0142", "+44 20 7946 0958", "(030) 1234 5678".
const PHONE = /(?<![\w@/.+-])(?:\+\d{1,3}[\s.-]?)?(?:\(\d{1,4}\)[\s.-]?)?\d{2,4}(?:[\s.-]\d{2,4}){1,4}(?![\w@/-])/g;
const DATE = /^(?:\d{4}-\d{1,2}-\d{1,2}|\d{1,2}[./-]\d{1,2}[./-]\d{2,4})$/;

const trimEnd = (s: string) => s.replace(/[.,;:!?)\]}]+$/, '');
const unique = (xs: string[]) => [...new Set(xs)];

/** A run of digit groups reads as a phone number: 7 to 15 digits, not a date, and more than a decimal number. */
function isPhone(candidate: string): boolean {
  const digits = candidate.replace(/\D/g, '').length;
  if (digits < 7 || digits > 15 || DATE.test(candidate)) return false;
  const separators = candidate.replace(/[\d]/g, '');
  return !/^\.$/.test(separators) && /[-+(]|\d \d/.test(candidate);
}

export interface ContactDetails {
  emails: string[];
  urls: string[];
  phones: string[];
}

/** The email addresses, web addresses and phone numbers written in `text`, each once, in order. */
export function contactDetailsIn(text: string): ContactDetails {
  const emails = unique((text.match(EMAIL) ?? []).map(trimEnd));
  const urls = unique((text.match(URL) ?? []).map(trimEnd));
  // Addresses are taken out first, so digits inside them are not read as phone numbers.
  const rest = [...emails, ...urls].reduce((t, x) => t.split(x).join(' '), text);
  const phones = unique((rest.match(PHONE) ?? []).map((p) => p.trim()).filter(isPhone));
  return { emails, urls, phones };
}

/** The material a request gives for its list: what follows its colon, else what it quotes. */
function listMaterial(sentence: string): string | null {
  const colon = sentence.indexOf(':');
  if (colon >= 0 && sentence.slice(colon + 1).trim()) return sentence.slice(colon + 1);
  // A single quote opens after a space and closes before one: the apostrophes of "Here's next week's rota" quote nothing.
  const quoted = /["“]([^"”]+)["”]|(?:^|\s)['‘]([^'’]+)['’](?=$|[\s.,;:!?])/.exec(sentence);
  return quoted ? (quoted[1] ?? quoted[2]!) : null;
}

/**
 * The items of the list the `n`-th sentence gives (after its colon, or in quotes), split at commas,
 * semicolons, line breaks, "and", "or" and "&"; null when it gives none.
 */
export function listItemsIn(sentence: string): string[] | null {
  const material = listMaterial(sentence);
  if (material === null) return null;
  const items = material
    .split(/\s*(?:[,;\n&]|\band\b|\bor\b)\s*/i)
    .map((s) => s.trim().replace(/^["“'‘]+|["”'’.!?]+$/g, ''))
    .filter((s) => /[\p{L}\p{N}]/u.test(s));
  return items.length ? items : null;
}

/** Items of a bare list are this short, and a bare list has at least this many. */
const BARE_ITEM_WORDS = 4;
const BARE_ITEMS_MIN = 3;

/**
 * The items of a sentence that is nothing but a list ("bananas, oat milk, dish soap, eggs"): three or
 * more short items between commas or semicolons, no colon, no question; null for any other sentence.
 */
export function bareListItems(sentence: string): string[] | null {
  const body = sentence.trim().replace(/[.!]+$/, '');
  if (/[:?"“]/.test(body) || !/[,;]/.test(body)) return null;
  const items = body.split(/\s*[,;]\s*(?:(?:and|or|&)\s+)?|\s+(?:and|or|&)\s+/i).map((s) => s.trim());
  const short = items.every((s) => /[\p{L}\p{N}]/u.test(s) && s.split(/\s+/).length <= BARE_ITEM_WORDS);
  return items.length >= BARE_ITEMS_MIN && short ? items : null;
}

/** A path or file name in the text ("/tmp/a.txt", "notes.md") names a file, whatever the words around it. */
export const PATH_LIKE =
  /(?:^|[\s([])(?:[\w.-]*\/[\w./-]+|[\w-]+\.[a-z][a-z0-9]{1,4}(?=\.(?:\s|$))|[\w-]+\.[a-z][a-z0-9]{0,4}(?!\.))(?=$|[\s,;:!?)\]'"]|\.(?:\s|$))/i;

/**
 * The items of the list the `index`-th sentence of `input` gives; or, when that sentence is a question
 * about a list it neither gives nor names a file for (the list is in the file then) ("How many are on this list?"), the bare list the
 * next sentence is.
 */
export function listItemsAt(input: string, index: number): string[] | null {
  const sentences = sentencesOf(input);
  const sentence = sentences[index] ?? '';
  const given = listItemsIn(sentence);
  if (given || !sentence.trimEnd().endsWith('?') || PATH_LIKE.test(sentence)) return given;
  return bareListItems(sentences[index + 1] ?? '');
}
