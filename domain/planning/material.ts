// What a request gives to work on, read deterministically: the message a delivery is asked to carry,
// and the things an action names that the run was never given. Both stay rules, not model choices:
// a delivery carries only words copied from the request (or an earlier action's result), and no run
// sends, summarises or answers about material it does not hold (issue 49).
import { wordsOf } from '../text/analyze.ts';

/** Where a delivery's message starts in its sentence, and the message itself. */
export interface MessageSpan {
  /** The request before the message ("Tell the support team"). */
  head: string;
  message: string;
  /** How the request introduced it: quotes are exact; the others run to the end of the sentence. */
  marker: 'quote' | 'that' | 'saying' | 'know' | 'colon';
}

// Double or typographic quotes; a single quote only when it opens after a space and closes before one
// (so "don't" is no quote).
const QUOTED = /["“]([^"”]+)["”]|(?:^|\s)['‘]([^'’]+)['’](?=$|[\s.,;:!?])/;
// The first marker that introduces what is said: "… that <message>", "… saying <message>",
// "let … know <message>", or a colon.
const INTRODUCED = /\s(that|saying)\s+|\b(know)\s+(?:that\s+)?|(:)\s+/i;

const cleanMessage = (s: string) =>
  s
    .trim()
    .replace(/^["“'‘]+|["”'’]+$/g, '')
    .replace(/[.!?]+$/, '')
    .trim();

/** The message a sentence introduces, if any; the caller decides whether its head asks to deliver it. */
export function messageSpan(sentence: string): MessageSpan | null {
  const quoted = QUOTED.exec(sentence);
  const introduced = INTRODUCED.exec(sentence);
  if (quoted && (!introduced || quoted.index <= introduced.index)) {
    const message = cleanMessage(quoted[1] ?? quoted[2] ?? '');
    return message ? { head: sentence.slice(0, quoted.index).trim(), message, marker: 'quote' } : null;
  }
  if (!introduced) return null;
  const marker = (introduced[1] ?? introduced[2])?.toLowerCase() as 'that' | 'saying' | 'know' | undefined;
  const rest = sentence.slice(introduced.index + introduced[0].length);
  // A quote right after the marker is the message itself: "saying 'on my way'".
  const inner = QUOTED.exec(rest);
  const message = cleanMessage(inner && inner.index <= 1 ? (inner[1] ?? inner[2] ?? '') : rest);
  if (wordsOf(message).length === 0) return null;
  if (marker === 'know' && !inner && namesWithoutSaying(rest)) return null;
  // "know" stays in the head: "Let the team know" is the request, what follows is what it says.
  const head = sentence.slice(0, introduced.index + (marker === 'know' ? 'know'.length : 0)).trim();
  return { head, message, marker: marker ?? 'colon' };
}

// Things a person works on or sends, which a run holds only when the request gives them. Kept as a
// list on purpose: which material a run was given must be decided the same way every time.
const MATERIAL_NOUNS = `report reports notes note contract contracts document documents doc docs file files spreadsheet
  spreadsheets sheet memo memos minutes slides slide deck presentation transcript transcripts log logs emails inbox
  thread threads attachment attachments invoice invoices receipt receipts statement statements agreement agreements proposal
  proposals draft drafts checklist summary changelog readme paper papers article articles letter letters feedback survey
  results data dataset recording recordings screenshot screenshots photo photos image images agenda tickets backlog roadmap
  policy policies manual handbook spec specs specification codebase repository repo code figures numbers forecast budget
  calendar schedule diagram chart charts plan timeline incident meeting discussion conversation chat messages
  comments reviews responses`
  .split(/\s+/)
  .filter(Boolean);

// A reference to one particular thing ("our Q3 vendor contracts", "the release notes", "yesterday's
// log"): a determiner or possessive, up to three more words, then a material noun.
const REFERENCE = new RegExp(
  `\\b(?:the|our|my|your|their|his|her|its|this|these|those|that|last|latest|yesterday's|today's|[a-z]+'s)\\s+(?:[\\w'’&-]+\\s+){0,3}(?:${MATERIAL_NOUNS.join('|')})\\b`,
  'i',
);
// Attached, enclosed or uploaded: a run's input is text only, so nothing ever was.
const ATTACHMENT = /\b(attached|attachments?|enclosed|enclosures?|uploaded)\b/i;

/** The thing `clause` names as given ("our Q3 vendor contracts"), or null: what makes an action need material. */
export function namedMaterial(clause: string): string | null {
  const attached = ATTACHMENT.exec(clause);
  if (attached) return attached[1]!.toLowerCase();
  const ref = REFERENCE.exec(clause);
  return ref ? ref[0].trim() : null;
}

/**
 * Whether what follows "let … know" says nothing itself: an aside after a dash ("let Tom know - he's
 * on that floor now"), or only the name of what to say ("let Marek know the new alarm code, it's in
 * facilities.txt"), which the run must find before anyone can send it.
 */
function namesWithoutSaying(rest: string): boolean {
  if (/^\s*[-–—]/.test(rest)) return true;
  const ref = REFERENCE.exec(rest);
  return ref !== null && ref.index === 0 && /^\s*(?:$|[,;.!?])/.test(rest.slice(ref[0].length));
}

/** Whether the clause names something attached (never given, whatever else the input holds). */
export function namesAttachment(clause: string): boolean {
  return ATTACHMENT.test(clause);
}

// A path, a file name with an extension, or a web address: something a read tool may open.
const OPENABLE =
  /(?:^|[\s([])(?:[\w.-]*\/[\w./-]+|[\w-]+\.[a-z][a-z0-9]{1,4}(?=\.(?:\s|$))|[\w-]+\.[a-z][a-z0-9]{0,4}(?!\.)|https?:\/\/\S+)(?=$|[\s,;:!?)\]'"]|\.(?:\s|$))/i;

/** Whether the text names a path or address a tool could open. */
export function namesOpenable(text: string): boolean {
  return OPENABLE.test(text);
}

/** Whether the text quotes something: the quoted words are material. */
export function quotes(text: string): boolean {
  return QUOTED.test(text);
}
