// What a run's input asks for, clause by clause, and whether any tool of the
// catalog can do it. Deterministic and shared by the local planner (to plan)
// and by verification (to check every requested action against what was
// performed), for local and upstream runs alike: no clause is dropped silently.
import { sentencesOf, tidy, clausesOfSentence, wordsOf } from '../text/analyze.ts';
import { messageSpan, namedMaterial, namesAttachment, namesOpenable, quotes } from './material.ts';
import { bareListItems, PATH_LIKE } from '../text/find-in-text.ts';

/** analysis: work on the given text (a model's answer does it); delivery: send the result (webhook); unsupported: an effect no tool performs. */
export type ActionKind = 'analysis' | 'delivery' | 'unsupported';

export interface RequestedAction {
  /** 1-based, in input order; plans cite it in `covers`. */
  n: number;
  clause: string;
  /** 0-based index into sentencesOf(input). */
  sentence: number;
  kind: ActionKind;
  /** The verb that decided the kind, when one did. */
  verb: string | null;
  /**
   * What the action works on or sends that the run was never given ("attached", "our Q3 vendor
   * contracts", "the release notes"): no answer about it can be true and no delivery of it can carry
   * it, so the action stays unresolved. Null otherwise (material.ts says what counts as given).
   */
  missing: string | null;
  /** delivery: the message the request gives to send, copied from it (after "that", a colon, "saying", "know", or in quotes). */
  message?: string;
  /** delivery: the earlier action whose result is sent ("summarise … and send it"), when the request gives no message. */
  messageFrom?: number;
  /** The input gives material to work on (statements, text after a colon, quotes): analysis of it needs no server tool. */
  given?: true;
  /**
   * A request's only action, beside statements: the whole input, whose paths ("… it's in phones.txt")
   * are the action's; a question beside where to look ("check oncall.md"): the question and that.
   */
  scope?: string;
}

export interface ReadOptions {
  /** The run recalls the tenant's memory, so a thing it names may be there: only attachments count as missing. */
  memory?: boolean;
}

const ANALYSIS_VERBS = words(`review summarise summarize summary analyse analyze assess evaluate compare contrast list identify
  extract outline draft plan check flag prioritise prioritize rank explain describe note highlight estimate map find collect
  compile gather recall consider examine study investigate propose suggest recommend write prepare organise organize
  categorise categorize group clarify understand determine decide answer read tell show give break summarising
  what which how why who when where whether is are does do should can could translate rewrite proofread critique`);

const DELIVERY_VERBS = words('send deliver notify post publish forward share broadcast alert inform announce ping message');

// State-changing verbs for which the catalog has no tool. Ambiguous verbs are
// here on purpose: an action that might not have happened is unresolved.
const UNSUPPORTED_VERBS = words(`delete remove erase drop purge destroy wipe pay transfer refund charge invoice bill buy purchase
  order book reserve schedule cancel email e-mail mail call phone text sms deploy release ship launch install uninstall
  upgrade update patch restart reboot shutdown shut start stop kill migrate provision scale rollback roll merge commit upload wire
  download sign submit file apply approve reject hire fire onboard invite create open close assign move rename archive backup
  back restore grant revoke rotate reset change set configure enable disable execute run fix implement build print fax
  contact tweet retire decommission terminate sell renew register subscribe unsubscribe lock unlock rebook`);

const IRREGULAR: Record<string, string> = {
  paid: 'pay',
  bought: 'buy',
  sent: 'send',
  sold: 'sell',
  shut: 'shut',
  built: 'build',
  ran: 'run',
  set: 'set',
  wrote: 'write',
  written: 'write',
  drew: 'draw',
  given: 'give',
  gave: 'give',
  shown: 'show',
  read: 'read',
};

const FILLER =
  /^(?:(?:hi|hiya|hey|hello)(?:\s+(?:there|all|love))?[,!.]+\s*|(?:please|pls|kindly|also|and|then|finally|next|first|second|third|lastly|now|so|just)\s+|(?:can|could|would|will) (?:you|u)\s+|(?:i|we) (?:need|want|would like) (?:you )?to\s+|(?:you|we) (?:should|must|need to|have to)\s+|let's\s+|go ahead and\s+)+/i;
const NEGATED = /^(?:do not|don't|never|without|no need to|avoid)\b/i;

function words(list: string): ReadonlySet<string> {
  return new Set(list.split(/\s+/).filter(Boolean));
}

/** The base form of an inflected verb, when it is one of `set`'s verbs. */
function verbIn(word: string, set: ReadonlySet<string>): string | null {
  const w = word.toLowerCase();
  if (set.has(w)) return w;
  if (IRREGULAR[w] && set.has(IRREGULAR[w]!)) return IRREGULAR[w]!;
  for (const suffix of ['ing', 'ed', 'es', 's', 'd']) {
    if (!w.endsWith(suffix)) continue;
    const stem = w.slice(0, -suffix.length);
    for (const candidate of [stem, `${stem}e`, stem.slice(0, -1)]) if (candidate.length > 1 && set.has(candidate)) return candidate;
  }
  return null;
}

// Verbs that almost never stand for a noun, so a conjunction or comma before one starts a new action
// ("…buckets and pay the invoice", "…, pay the invoice"); "open questions and risks" stays one clause.
const SPLIT_VERBS = [
  ...words(`delete remove erase purge destroy wipe pay transfer refund buy purchase book schedule cancel email
  deploy install uninstall upgrade restart reboot migrate provision merge upload download sign submit hire fire invite assign
  rename archive restore revoke rotate configure enable disable execute fix implement print fax contact tweet retire
  decommission terminate sell renew register subscribe unsubscribe send deliver notify post publish forward share broadcast alert
  inform announce wire tell let
  review summarise summarize analyse analyze assess evaluate compare identify extract outline draft check flag prioritise
  prioritize explain describe highlight estimate collect compile gather examine investigate propose suggest recommend write
  prepare translate`),
];
const KNOWN_VERBS: ReadonlySet<string> = new Set(SPLIT_VERBS);
// "…, so please move a.txt", "…, so could you rename it": what follows is a request, whatever its verb.
const ACTION_SPLIT = new RegExp(
  `\\s*(?:(?:,|\\band\\b|\\bor\\b|\\bbut\\b|&)\\s+(?:then\\s+|also\\s+|please\\s+)*(?=(?:${SPLIT_VERBS.join('|')})\\b(?!-))|,?\\s*\\bso\\s+(?=please\\s|(?:can|could|would|will) (?:you|u)\\s))`,
  'i',
);
// Only the bare forms ask for something ("must be deleted", "should get paid"); "was restarted" reports it.
const PASSIVE = new Set(['be', 'get']);
// A leading word followed by one of these is a noun ("Update on…", "Release notes…", "Open questions are…").
const NOUN_CUES = new Set(['on', 'of', 'about', 'regarding', 'notes', 'questions', 'items', 'is', 'are', 'was', 'were', 'has', 'have', 'had', 'from']);

// Past participles that are their base form ("must be reset", "should be shut").
const SAME_PARTICIPLE = new Set('set shut reset put cut let quit upset broadcast split spread read'.split(' '));
/** A past participle: "deleted", "taken", "paid"; not "back" ("will be back") or "moving" ("would I be moving"). */
const isParticiple = (w: string) => /(?:ed|en)$/.test(w) || Object.hasOwn(IRREGULAR, w) || SAME_PARTICIPLE.has(w);

/** Whether the text's second word makes its first a noun ("Release notes …"); a path ("Summarise notes.txt") makes it none. */
function nounCue(text: string): boolean {
  // From the first token with a letter or digit ("🚀 Update on the launch" starts with "Update"); a path's own noun cue
  // comes after it ("Release notes.md has everything").
  const tokens = text.trim().split(/\s+/);
  const [, second = '', third = ''] = tokens.slice(
    Math.max(
      0,
      tokens.findIndex((t) => /[\p{L}\p{N}]/u.test(t)),
    ),
  );
  const path = /[./]\w/.test(second) && !/^(?:is|are|was|were|has|have|had)$/i.test(third);
  return NOUN_CUES.has(wordsOf(second)[0] ?? '') && !path;
}

/** A request to do something in the passive ("must be deleted", "should get paid"), anywhere in the words. */
function passiveVerb(ws: string[], set: ReadonlySet<string>): string | null {
  for (let i = 1; i < ws.length; i++) {
    if (!PASSIVE.has(ws[i - 1]!) || !isParticiple(ws[i]!.toLowerCase())) continue;
    const verb = verbIn(ws[i]!, set);
    if (verb) return verb;
  }
  return null;
}

// "Tell the team that…", "Let support know…": a message to someone, which is a delivery. "Tell me…",
// "tell whether…" ask for an answer instead.
const TELL_ANSWERS = new Set(['me', 'us', 'whether', 'if', 'how', 'what', 'why', 'which', 'who', 'when', 'where', 'apart', 'the']);
const LET_KNOW = /^let\s+(?:\S+\s+){0,4}know\b/i;
// "Let me know …" with no medium asks for the answer; "Let me and Sarah know", "… by email" is a message.
const LET_ME_KNOW = /^let\s+(?:me|us)\s+know\b(?!.*\b(?:by|via|over|on)\s+(?:e-?mail|text|sms|slack|teams|whatsapp|phone)\b)/i;

function messageToSomeone(body: string, first: string, second: string, third: string): boolean {
  // "Let me know …" asks for an answer, as "tell me …" does; "Let support know …" is a message.
  if (first === 'let') return LET_KNOW.test(body) && !LET_ME_KNOW.test(body);
  // "tell the support channel…" is a message, "tell the difference…" an answer: after "the", the next word decides.
  return first === 'tell' && (!TELL_ANSWERS.has(second) || (second === 'the' && !['difference', 'time', 'truth'].includes(third)));
}

// What a piece of writing is, when a verb that can also change the world makes one ("create a summary").
const TEXT_PRODUCTS = new Set(
  'summary summaries list lists table outline draft overview recap digest abstract synopsis paragraph sentence headline title bullet bullets'.split(' '),
);
const MAKE = new Set(['create', 'build', 'make', 'produce', 'generate', 'compose']);
const ARRANGE = new Set(['order', 'sort', 'arrange']);

/**
 * An effect verb that, here, asks only for writing: making a piece of text ("create a summary of …",
 * "make a list …"), or putting the items the request gives in order ("Order these tasks by urgency:
 * …"). Anything else it asks stays an effect no tool performs.
 */
function worksOnText(body: string, second: string, third: string): boolean {
  const first = wordsOf(body)[0] ?? '';
  const object = ['a', 'an', 'the', 'one', 'short', 'brief'].includes(second) ? third : second;
  if (MAKE.has(first) && TEXT_PRODUCTS.has(object)) return true;
  return ARRANGE.has(first) && /\bby\b/i.test(body) && /:\s*\S/.test(body);
}

// Ways to reach people that are not a message to a channel: the delivery tool does not send an SMS or an
// email, ring a tannoy or put a meeting in a calendar, so such a request is an effect no tool performs.
const OTHER_MEDIUM =
  /\b(sms(?:es)?|text messages?|tannoy|pa system|loudspeakers?|calendar invites?|invites?|invitations?|meeting requests?|fax(?:es)?|whatsapps?|voicemails?|phone calls?|postcards?|e-?mails?|inbox)\b|[\w.+-]+(@)[\w-]+\.[\w.-]+/i;

function kindOf(clause: string): { kind: ActionKind; verb: string | null } {
  const read = kindByWords(clause);
  const medium = read.kind === 'delivery' ? OTHER_MEDIUM.exec(clause) : null;
  return medium ? { kind: 'unsupported', verb: `${read.verb} by ${medium[2] ? 'email' : medium[1]!.toLowerCase()}` } : read;
}

// Words that name or describe what is made, not more to do with it ("called", "named", "a text file").
const NAMING = new Set(['call', 'called', 'name', 'named', 'file', 'text']);
const MAKES_FILE =
  /^\W*(?:(?:can|could|would) you\s+)?(?:(?:make|set up|start)\s+(?:me\s+)?(?:a\s+)?(?:new\s+)?|new\s+)(?:text\s+)?(?:file|folder|directory)\b/i;

const DETERMINERS = new Set('the a an our my your this that their its'.split(' '));

// Where or what for, before the request itself ("In tickets/open.txt can you change …", "For the Leeds job, could you …").
const LEADING_PHRASE = /^(?:in|on|for|at|from|about|regarding|with)\s+[^,?]{1,60}?,?\s+((?:can|could|would|will) you\s.*)$/is;

function kindByWords(clause: string): { kind: ActionKind; verb: string | null } {
  const addressed = LEADING_PHRASE.exec(clause.trim());
  if (addressed) return kindByWords(addressed[1]!);
  const body = clause.replace(FILLER, '');
  if (NEGATED.test(body)) return { kind: 'analysis', verb: null }; // a constraint, not a request to act
  const [first = '', second = '', third = ''] = wordsOf(body);
  // "Make a new file called notice.txt …", "set up a new folder …", "New file a.txt please": a file or folder made is one
  // created ("make" alone more often asks for writing), where nothing more is asked after it ("… and move a.txt into it").
  const made = MAKES_FILE.exec(body);
  // A word after a determiner names a thing ("in the shared folder"), not more to do.
  const after = wordsOf(body.slice(made?.[0].length ?? 0));
  const more = made !== null && after.some((w, i) => isKnownVerb(w) && !NAMING.has(verbIn(w, KNOWN_VERBS) ?? w) && !DETERMINERS.has(after[i - 1] ?? ''));
  if (made !== null && !more) return { kind: 'unsupported', verb: 'create' };
  if (messageToSomeone(body, first, second, third)) return { kind: 'delivery', verb: first === 'let' ? 'let know' : 'tell' };
  // An imperative starts with the bare verb; "Sent the report" or "Open questions:" state, they do not ask.
  // "Summarise: …" asks all the same: a verb that only asks for work, followed by its material.
  const labelled = new RegExp(`^\\W*${first}\\s*:`, 'i').test(body) && !ANALYSIS_VERBS.has(first) && !DELIVERY_VERBS.has(first);
  const imperative = !nounCue(body) && !labelled;
  const byFirst =
    imperative &&
    ((UNSUPPORTED_VERBS.has(first) && !ANALYSIS_VERBS.has(first) && { kind: 'unsupported' as const, verb: first }) ||
      (DELIVERY_VERBS.has(first) && { kind: 'delivery' as const, verb: first }) ||
      (ANALYSIS_VERBS.has(first) && { kind: 'analysis' as const, verb: first }));
  if (byFirst) return byFirst.kind === 'unsupported' && worksOnText(body, second, third) ? { kind: 'analysis', verb: first } : byFirst;
  // No leading verb ("The old buckets must be deleted"): an effect in the passive still counts.
  const ws = wordsOf(body);
  const unsupported = passiveVerb(ws, UNSUPPORTED_VERBS);
  if (unsupported) return { kind: 'unsupported', verb: unsupported };
  const delivery = passiveVerb(ws, DELIVERY_VERBS);
  if (delivery) return { kind: 'delivery', verb: delivery };
  return { kind: 'analysis', verb: null };
}

/**
 * The clauses of a sentence, in order. clausesOfSentence drops fragments of one word, but a
 * lone word that asks for an effect ("…, then deploy.", "Pay.") is a request all the same.
 */
function clausesWithLoneEffects(sentence: string): string[] {
  const loneEffects = (gap: string) =>
    gap
      .split(/\s+/)
      .map(tidy)
      .filter((w) => wordsOf(w).length === 1 && kindOf(w).kind !== 'analysis');
  const out: string[] = [];
  let from = 0;
  for (const clause of clausesOfSentence(sentence)) {
    const at = sentence.indexOf(clause, from);
    if (at < 0) {
      out.push(clause);
      continue;
    }
    out.push(...loneEffects(sentence.slice(from, at)), clause);
    from = at + clause.length;
  }
  return [...out, ...loneEffects(sentence.slice(from))];
}

/**
 * A quotation: in double quotes, or in single quotes that open after a space, a bracket or a colon and
 * close before one or a stop ("says: 'Mon - 3 labourers, Tue - 4'."), so an apostrophe ("Gary's") opens none.
 */
const QUOTATION = /"[^"]*"|“[^”]*”|(?<=^|[\s(:])['‘][^'’\n]+['’](?=$|[\s.,;:!?)])/g;

/** The text with every quotation blanked out, its length kept, so a colon inside a quote is not found. */
const maskQuotes = (text: string) => text.replace(QUOTATION, (q) => '_'.repeat(q.length));

/**
 * A sentence without the material its request introduces: "Summarise these notes and post them to
 * the channel: the audit passed, renew the certificate." asks two things; what follows the colon is
 * what they work on, not more requests. Only a colon after a request to work on, send or change something
 * introduces material ("Do the following: pay the invoice" still asks to pay).
 */
function requestPart(sentence: string): string {
  // A colon inside a quote is the quote's ('make the Saturday line say "Saturday: closed"').
  const colon = /:\s/.exec(maskQuotes(sentence));
  if (!colon) return sentence;
  const head = sentence.slice(0, colon.index);
  if (wordsOf(head).length < 2) return sentence;
  const asks = clausesWithLoneEffects(head).some((c) => {
    const k = kindOf(c);
    return k.verb !== null && k.kind !== 'unsupported';
  });
  // What follows is material, unless the head names material of its own and what follows asks in
  // turn ("Review our contracts: summarise the renewal dates …").
  const asksInTurn = namedMaterial(head) !== null && kindOf(sentence.slice(colon.index + 1).trim()).verb !== null;
  if (asks && !asksInTurn) return head;
  // After a change, too, what follows is what it writes ("Log this at the bottom of log.txt: Tue 21 Oct -
  // Achterberg Inks - 2 boxes"), unless it leads with a request ("Update the wiki: delete the old page").
  const changes = wordsOf(head).some((w) => verbIn(w, CHANGE_VERBS) !== null);
  // Only a request that leads with its verb asks in turn: a passive in the text to write ("…: The staff room will be
  // closed on Friday.") is what it says, not an effect asked for.
  const asksAfter = actionsOfPart(sentence.slice(colon.index + 1), 0).some(
    (d) => (d.kind !== 'analysis' || d.verb !== null) && (leadsWithVerb(d) || OBLIGATION.test(d.clause)),
  );
  return changes && !asksAfter ? head : sentence;
}

type Draft = Omit<RequestedAction, 'n' | 'missing'>;

// What must be done, in the passive ("and the team should be notified"): asked all the same.
const OBLIGATION = /\b(?:should|must|needs?\s+to|ha(?:s|ve)\s+to|ought\s+to)\s+be\b/i;

/** Whether the draft's verb is the word it starts with (an imperative), not one further in (a passive). */
function leadsWithVerb(d: Pick<Draft, 'clause' | 'verb'>): boolean {
  const addressed = LEADING_PHRASE.exec(d.clause.trim());
  const first = wordsOf((addressed?.[1] ?? d.clause).replace(FILLER, ''))[0] ?? '';
  return d.verb !== null && d.verb.split(' ')[0] === (verbIn(first, KNOWN_VERBS) ?? first);
}

/** Whether a colon introduces text that is not itself a request ("Summarise: the vendor raised prices …"). */
function colonMaterial(sentence: string): boolean {
  const colon = /:\s*(\S.*)$/.exec(sentence);
  return colon !== null && kindOf(colon[1]!).verb === null;
}

/** The actions of one part of a sentence, split at conjunctions before a verb that starts a new action. */
function actionsOfPart(part: string, sentence: number): Draft[] {
  // A quotation is material, never more requests: it is split nowhere ("…: \"call Dario, or write to him.\"").
  const quoted: string[] = [];
  const masked = part.replace(QUOTATION, (q) => `\u0000${quoted.push(q) - 1}\u0000`);
  const unmasked = (text: string) => text.replace(/\u0000(\d+)\u0000/g, (_, i: string) => quoted[Number(i)]!);
  return clausesWithLoneEffects(masked).flatMap((clause) =>
    clause
      .split(ACTION_SPLIT)
      .map((p) => tidy(unmasked(p)))
      .filter((p) => wordsOf(p).length >= 1)
      .map((p) => ({ clause: p, sentence, ...kindOf(p) })),
  );
}

/**
 * The actions of one sentence. A delivery that introduces its message ("Tell the team that …",
 * "Post to the channel: …", "… saying '…'") carries it, and the message is not read as more requests;
 * a colon after work on material ("Summarise these notes and post them: …") introduces that material.
 */
function actionsOfSentence(sentence: string, index: number): { drafts: Draft[]; material: boolean } {
  const span = messageSpan(sentence);
  if (span && wordsOf(span.head).length > 0) {
    const head = actionsOfPart(span.head, index);
    const last = head[head.length - 1];
    const materialForWork = span.marker === 'colon' && head.some((d) => d.kind === 'analysis' && d.verb !== null);
    if (last?.kind === 'delivery' && !materialForWork) {
      return { drafts: [...head.slice(0, -1), { ...last, message: span.message }], material: true };
    }
  }
  const part = requestPart(sentence);
  // A later delivery of the sentence introduces its own message ("Write "…" to notice.txt, then let reception know the
  // notice is up"): the quote before it was the write's.
  const drafts = actionsOfPart(part, index).map((d) => {
    const own = d.kind === 'delivery' ? messageSpan(d.clause) : null;
    if (!own || wordsOf(own.head).length === 0 || own.marker === 'colon' || !saysSomething(own.message) || /\band\b/i.test(own.head)) return d;
    const [head] = actionsOfPart(own.head, index);
    return head?.kind === 'delivery' ? { ...head, message: own.message } : d;
  });
  return { drafts, material: part !== sentence || colonMaterial(sentence) };
}

/**
 * Whether a message says something of its own: more than one word, and not what the earlier work finds ("let Ana
 * know how it went", "when it is done", "tell the staff that asked").
 */
const saysSomething = (message: string) => wordsOf(message).length > 1 && !/^\W*(?:how|what|when|whether|if|which|who|why|where)\b/i.test(message);

/**
 * Every action the input requests, in order, each with what it is missing. An input with no clause
 * of two words or more (and no lone effect verb) is one analysis action.
 */
export function requestedActions(input: string, options: ReadOptions = {}): RequestedAction[] {
  const drafts: Draft[] = [];
  let introduced = false;
  const sentences = sentencesOf(input);
  sentences.forEach((sentence, index) => {
    const read = actionsOfSentence(sentence, index);
    drafts.push(...read.drafts);
    introduced ||= read.material;
  });
  if (drafts.length === 0) drafts.push({ clause: tidy(input), sentence: 0, kind: 'analysis', verb: null });
  const numbered = drafts.map((d, i) => ({ ...d, n: i + 1, missing: namesAttachment(d.clause) ? namedMaterial(d.clause) : null }));
  const { requests, material, consulted } = withoutStatements(numbered, sentences, input);
  // Material is given when the input holds more than its requests: statements, text after a colon, a
  // quote, a path a tool may open; or the tenant's memory, when the run recalls it.
  const given = options.memory || introduced || material || quotes(input) || namesOpenable(input);
  const alone = requests.length === 1 && numbered.length > 1;
  const scopeOf = (a: RequestedAction): string | undefined => {
    if (alone) return input;
    if (!asksQuestion(a)) return undefined;
    if (consulted.length) return [a.clause, ...consulted].join(' ');
    // A question that names no path reads what the other questions and the statements beside it name
    // ("has Leo handed his form in? It's all in consent-forms.csv. If he has, what day?").
    const elsewhere = namesOpenable(a.clause) ? [] : namedElsewhere(a, requests, sentences).filter((s) => !s.includes(a.clause));
    return elsewhere.length ? [a.clause, ...elsewhere].join(' ') : undefined;
  };
  return withMessageSources(
    requests.map((a) => {
      const scope = scopeOf(a);
      return {
        ...a,
        missing: a.missing ?? (given ? null : referenceMissing(a)),
        ...(given ? { given: true as const } : {}),
        ...(scope === undefined ? {} : { scope }),
      };
    }),
    given,
  );
}

/**
 * Where a question's material is, when every request is a question: the sentences beside them that
 * name a path ("It's all in consent-forms.csv."), and another question's, for a question that refers
 * back to it ("And which of them are drivers?"). Beside another request ("Summarise the notes. it's in
 * phones.txt"), a path may be that request's; a question about something else reads nothing of another's.
 */
function namedElsewhere(a: RequestedAction, requests: RequestedAction[], sentences: string[]): string[] {
  if (!requests.every(asksQuestion)) return [];
  const refersBack = wordsOf(a.clause).some((w) => BACK_REFERENCES.has(w));
  return sentences.filter((s, k) => namesOpenable(s) && (refersBack || requests.every((r) => r.sentence !== k)));
}
const BACK_REFERENCES = new Set('it its them they their he she his her him that those these there'.split(' '));

/** The thing an analysis or delivery names that nothing in the input gives; null when it needs nothing named. */
function referenceMissing(a: RequestedAction): string | null {
  // A delivery's material is its message or an earlier result (withMessageSources), whatever it names.
  if (a.kind !== 'analysis') return null;
  // What is in a place a catalog's tools read ("the files in the shared folder", "the latest commit in the repo") is there to read.
  return namesSource(a.clause) ? null : namedMaterial(a.clause);
}

/**
 * Where each delivery's message comes from: its own words, else the result of the nearest earlier
 * action that does work ("Summarise … and send it"). A delivery with neither has nothing to send. An
 * analysis action beside one whose material is missing, in the same sentence, works on that too
 * ("Review our contracts: summarise the renewal dates and flag auto-renewals").
 */
function withMessageSources(actions: RequestedAction[], given: boolean): RequestedAction[] {
  const out: RequestedAction[] = [];
  for (const a of actions) {
    const sibling = out.find((o) => o.sentence === a.sentence && o.missing !== null);
    if (a.kind === 'analysis' && a.missing === null && sibling) {
      out.push({ ...a, missing: sibling.missing });
      continue;
    }
    if (a.kind !== 'delivery' || a.message !== undefined || a.missing !== null) {
      out.push(a);
      continue;
    }
    const source = [...out].reverse().find((o) => o.kind === 'analysis' && o.missing === null);
    const named = given ? null : namedMaterial(a.clause);
    out.push(source ? { ...a, messageFrom: source.n } : { ...a, missing: named ?? NO_MESSAGE });
  }
  return out;
}

// Words a qualifier beside a question starts with ("only need staging", "not prod"), the verbs that end
// in -ing all the same, and where "should be …" says the material is ("should be in the knowledge graph").
const QUALIFIER_START = new Set('only not anything nothing everything something'.split(' '));
const ING_VERBS = new Set('bring ring sing string swing fling sting wring'.split(' '));
const MODAL = new Set('should might may must'.split(' '));
const PLACE_PREPOSITIONS = new Set('in on at inside under somewhere there here'.split(' '));

// Where an answer is looked up: a path, or a place a catalog's tools read ("check the knowledge graph").
const SOURCE = String.raw`(?:the\s+|our\s+)?(?:knowledge graph|graph|shared (?:folder|drive)|share|(?:git\s+)?repo(?:sitory)?)`;

/** Whether the text names a place a catalog's tools read ("in the knowledge graph", "the repo"). */
export const namesSource = (text: string) => new RegExp(`\\b${SOURCE}\\b`, 'i').test(text);
// An instruction that only says where to look ("can you check oncall.md and", "(check the knowledge graph)").
const CONSULT = new RegExp(
  String.raw`^(?:(?:hey|hi|hello)\W+)?(?:(?:please|pls|also|just)\s+)?(?:(?:can|could|would) you\s+)?(?:please\s+)?(?:check|look (?:at|in|through)|go (?:through|over)|(?:have|take) a (?:quick\s+)?look (?:at|in|through)|consult|open|read|see)\s+(\S+|${SOURCE}|\S+\s+(?:in|on|from)\s+(?:${SOURCE}|\S+)|\S+\s*\([^()]{1,80}\)?|(?:(?:the|our|my)\s+)?(?:[\w-]+\s+){0,3}\([^\s()]+\)?)(?:\s+(?:please|pls|for me))?(?:\s*,?\s*(?:and|pls|please|thanks|thx))?$`,
  'i',
);
// Why the asker asks ("Need to know before I call them", "want to make sure I don't forget anything"): a
// reason beside a question, whatever verbs follow it.
const PURPOSE =
  /^(?:i\s+)?(?:just\s+)?(?:(?:need|want|wanted)\s+to\s+(?:know|make sure|be sure)\s+(?:before|because|since|so|as|for|i|we|nobody|no one|who|what|when|where|which|whether|if)\b|need(?:s|ed)?\s+(?:it|this|that|them|these|those)\s+for\s+(?![^,;]*\b(?:and|so|then|but)\b)[^,;]{1,40}$)/i;
// The asker's own doing, in the first person ("and I need to chase it", "I went blank").
const ASKER_OWN =
  /(?:^|[,;-]\s*|\b(?:and|but|so)\s+)i\s+(?:(?:just|really|still)\s+)?(?:(?:need|want|have|got)\s+to|went)\b(?!\s+(?:know|find|see|check|work out|understand|confirm)\b)/i;
// What someone who cannot recall the answer adds ("I can't remember the name").
const CANNOT_RECALL = /^(?:i|we)\s+(?:can't|cannot|can not|don't|do not)\s+(?:remember|recall)\b|^(?:i|we)\s+forg[eo]t\b/i;
// Thanks and courtesy, which ask nothing ("Thanks so much.", "No rush at all.").
const COURTESY =
  /^(?:(?:many\s+)?(?:thanks|thank you|thx|ta|cheers)(?:\s+(?:so|very)\s+much|\s+a lot|\s+in advance|\s+again)?(?:\s+x+)?|(?:kind|best|warm)\s+regards|(?:best|warm)\s+wishes|no rush(?:\s+at all)?|much appreciated|(?:just\s+|please\s+)?let (?:me|us) know|lmk)\W*$/i;

// A sign-off with a name ("Cheers, Gary", "Thanks Priya"): the name is capitalised and no verb ("Thanks, send it" asks).
const SIGN_OFF = /^(?:cheers|thanks|thank you|ta|regards|kind regards|best regards|best wishes|many thanks)\s*,?\s+(\S+?)\W*$/i;
const isCourtesy = (clause: string) => {
  if (COURTESY.test(clause)) return true;
  const name = SIGN_OFF.exec(clause)?.[1] ?? '';
  return /^\p{Lu}/u.test(name) && !isKnownVerb(name.toLowerCase()) && !QUESTION_WORDS.has(name.toLowerCase());
};

/** A clause that names where to look and nothing else: a path the request names, or a place such as the knowledge graph. */
function consultsOnly(clause: string): boolean {
  // A lead-in that asks nothing before a colon ("Morning! Quick one before the lunch rush: can you look at …").
  // A lead with a verb of any effect ("Call the plumber if not: see contacts.txt") asks all the same.
  const lead = /^[^:]{1,60}:\s+/.exec(clause.trim());
  const asksInLead = lead !== null && (holdsKnownVerb(lead[0]) || wordsOf(lead[0]).some(isEffectVerb) || asksMore(lead[0]));
  const body = lead && !asksInLead ? clause.trim().slice(lead[0].length) : clause;
  const m = CONSULT.exec(
    body
      .trim()
      .replace(/^\(|[\s.!)-]+$/g, '')
      .trim(),
  );
  if (m === null) return false;
  // A path, a place, a path in a place ("orders.csv in the shared folder") or a thing and its path ("the asset list (assets.csv)").
  const target = m[1]!;
  // What a bracket after the path says is where it is ("(it's in /srv/share)"), not more to do ("(and chase the overdue ones)").
  const aside = (/\(([^()]*)\)?$/.exec(target)?.[1] ?? '').replace(/\S*[/.]\S*/g, ' ');
  if (aside && (holdsKnownVerb(aside) || wordsOf(aside).some(isEffectVerb) || asksMore(aside))) return false;
  return PATH_LIKE.test(` ${target}`) || namesSource(target);
}

/** "Should be in our knowledge graph", alone or followed by "I can't remember the name". */
function saysWhereMaterialIs(ws: string[], clause: string): boolean {
  const [first = '', second = '', third = ''] = ws;
  if (!(MODAL.has(first) && second === 'be' && PLACE_PREPOSITIONS.has(third))) return false;
  const rest = clause
    .split(',')
    .slice(1)
    .map((p) => p.trim());
  return (rest.length > 0 && rest.every((p) => p === '' || CANNOT_RECALL.test(p))) || !holdsKnownVerb(clause);
}

// A constraint on a change, which asks nothing of its own ("leave budget.txt where it is", "Penrose stays put").
const LEAVES_ALONE =
  /^(?:(?:and|just|please|but)\s+)*(?:leave|keep)\b(?:[^.?!]|\.(?=\S))*\b(?:as (?:it is|they are|is)|where (?:it is|they are)|alone|the rest|untouched|unchanged|already there|out of (?:it|the commit))(?:\s+(?:please|pls|ta|thanks))?\W*$/i;
const STAYS = /\b(?:stays?|remains?)\s+(?:exactly\s+)?(?:as (?:it is|they are)|put|where it is|the same|unchanged)\W*$/i;

/** Whether a word is a verb of an effect or a message ("call", "order", "ring" aside: those this file does not know). */
const isEffectVerb = (w: string) => verbIn(w, UNSUPPORTED_VERBS) !== null || verbIn(w, DELIVERY_VERBS) !== null;
// How a clause that goes on to ask more begins, or what it holds: "(and who is the backup?)", "(also ring Dave)", "if so, …".
const ASKS_MORE = /\?|^\W*(?:and|also|plus|pls|please|if|what about|then)\b|\b(?:can|could|would) (?:you|u)\b/i;
/** Whether a clause asks more than its words seem to: a question, a WH word first, or a lead that goes on to ask. */
const asksMore = (clause: string) => ASKS_MORE.test(clause) || WH_WORDS.has(wordsOf(clause)[0] ?? '');

/** A word that is a verb this file knows, of work or of change, in any of its forms. */
const isKnownVerb = (w: string) => verbIn(w, KNOWN_VERBS) !== null || verbIn(w, CHANGE_VERBS) !== null;
const holdsKnownVerb = (text: string) => wordsOf(text).some(isKnownVerb);

/** A clause that only says what a change leaves as it is: one comma-part says so, and no other asks anything. */
function onlyConstrains(clause: string): boolean {
  const parts = clause.split(',').map((p) => p.trim());
  const at = parts.findIndex((p) => LEAVES_ALONE.test(p) || STAYS.test(p));
  // Nothing else in it asks ("Add a line to notes.txt but make sure the header stays the same" adds).
  const asks = (p: string) => holdsKnownVerb(p.replace(STAYS, '').replace(/\b(?:leave|keep)\b/gi, ''));
  return at >= 0 && !parts.some(asks);
}

/**
 * News told in passing ("Latte's going up.", "Hartley job's all wrapped up."): a noun with "'s" among
 * its first two words, no question word (not "Chef's asking how much …"), nothing that asks ("needs",
 * "should") and no verb this file knows.
 */
function isNarrative(clause: string): boolean {
  const tokens = clause.toLowerCase().replace(/’/g, "'").split(/\s+/).slice(0, 2);
  const possessive = tokens.some((w) => /^[a-z]{2,}'s$/.test(w) && !NOT_NOUNS_S.has(w));
  return possessive && !wordsOf(clause.toLowerCase()).some((w) => WH_WORDS.has(w) || ASKING_WORDS.has(w)) && !holdsKnownVerb(clause);
}
// Words that make news a request ("Sam's report needs a summary", "Dad's car should be booked in").
const ASKING_WORDS = new Set('need needs want wants should must please pls could can would'.split(' '));
const NOT_NOUNS_S = new Set("let's that's what's who's where's when's how's here's there's it's he's she's".split(' '));

const WH_WORDS = new Set('what which how why who whom whose when where whether'.split(' '));
// Words that carry a clause on to what follows from it ("Sunita rang, so ring her back").
const SO_THEN = new Set('so then and but'.split(' '));

// Words a declarative sentence starts with; an imperative starts with its verb ("Mention the date").
const DECLARATIVE_START = new Set(
  'the a an this that these those it its our my your their his her we i you they he she there here someone somebody everyone everybody nobody anyone anybody'.split(
    ' ',
  ),
);
// What a named subject's news goes on with ("Sunita Rao just rang …", "Ticket 1042 is sorted now").
const NEWS_VERB = /^(?:is|are|was|were|has|had|rang|said|left|came|went|told|sent|got|[a-z]{3,}ed)$/;
// An adverb news may put before its verb ("Sunita Rao just rang").
const NEWS_ADVERB = /^(?:just|already|still)$/;

/**
 * News of someone or something named ("Sunita Rao just rang asking where her order is", "Ticket 1042 is
 * sorted now"): two capitalised words, or a word and a number, then a word news goes on with; nothing
 * that asks ("needs", "should"), and nothing addressed to the reader ("Ring Sunita Rao about …" starts
 * with a verb, which is no news word after it).
 */
function isNamedNews(clause: string): boolean {
  const [a = '', b = '', c = '', d = ''] = clause.trim().split(/\s+/);
  const named = (/^\p{Lu}/u.test(a) && /^\p{Lu}/u.test(b)) || (/^\p{Lu}\p{Ll}+$/u.test(a) && /^#?\d[\w-]*$/.test(b));
  // The verb as written, lower case ("Ring Mohammed Ahmed …" has a name, not a verb, third).
  const goesOn = NEWS_VERB.test(c) || (NEWS_ADVERB.test(c) && NEWS_VERB.test(d));
  const words = wordsOf(clause);
  // News that goes on to ask ("…, so ring her back") is a request.
  const asks = words.some((w) => ASKING_WORDS.has(w) || MODAL.has(w) || w === 'you' || SO_THEN.has(w));
  return named && goesOn && !asks;
}

/** A one-word label and its data ("timesheet: mon 7.5h, tue 8h"): material, not a request ("10:30" is no label). */
function labelsData(clause: string): boolean {
  const label = /^([^:\s]+):\s/.exec(clause.replace(/"[^"]*"|“[^”]*”/g, '""'));
  return label !== null && wordsOf(label[1]!).length === 1 && colonMaterial(clause);
}

// Someone obliged to do something: a request for it, however it is worded.
const OBLIGED =
  /^\W*(?:you|we|someone|somebody|everyone|everybody|anyone|anybody)\s+(?:(?:will|would|really|still|also)\s+)?(?:needs?\s+to|must|should|ha(?:s|ve)\s+(?:got\s+)?to|ought\s+to)\s+(?!know\b|make sure\b|be sure\b)/i;
// A greeting before what a clause says ("hi, the wifi keeps dropping out").
const GREETING = /^\W*(?:hi|hey|hello|morning|good morning|afternoon)\b[\s,!.-]*/i;
// A clause that only leads into what follows ("Quick one -", "Quick question:", "Hi all").
const LEAD_IN =
  /^(?:(?:hi|hiya|hey|hello)(?:\s+(?:all|everyone|team|there))?|good\s+(?:morning|afternoon|evening)|morning|afternoon)?\W*(?:(?:quick|small|silly|random|another)\s+(?:one|q|question|query|thing))?\W*$/i;

// Who is writing ("Hi, collections team here", "Sam here!"), with no verb that asks.
const SELF_INTRODUCED = /^(?:(?:hi|hiya|hey|hello|morning)\W+)?(?:it's\s+)?(?:[\p{L}'’&-]+\s+){1,4}here\W*$/iu;
const introducesSelf = (a: RequestedAction) =>
  a.sentence === 0 && SELF_INTRODUCED.test(a.clause.trim()) && !holdsKnownVerb(a.clause) && !QUESTION_WORDS.has(leadingWords(a.clause)[0] ?? '');

// The salutation of a letter pasted after a question ("Dear Mrs Grant,"): names only, no i flag (it reads \p{Lu} as any letter).
const DEAR = /^[Dd]ear\s+(?:\p{Lu}[\p{L}'.-]*|all|team|everyone|colleagues)(?:\s+\p{Lu}[\p{L}'.-]*){0,2}\W*$/u;

/** The clause's words after any greeting, the first without its contraction ("We're …" → we). */
function leadingWords(clause: string): string[] {
  const [first = '', ...rest] = wordsOf(clause.replace(GREETING, ''));
  return [first.replace(/'(?:re|m|ve|ll|d)$/, ''), ...rest];
}

/**
 * A statement: no verb that asks, no effect in the passive, not a question, and worded as one (a
 * constraint, or it starts with a determiner or pronoun, or a quote, or its second word says what
 * something is). A clause led by a verb this file does not know ("Mention the date") is a request.
 */
function isStatement(a: RequestedAction): boolean {
  if (a.kind !== 'analysis' || a.verb !== null || a.missing !== null || a.clause.trimEnd().endsWith('?')) return false;
  // A negated effect ("Do not email anyone") is a constraint on the request, not one of its own.
  if (NEGATED.test(a.clause.replace(FILLER, ''))) return true;
  const [first = ''] = leadingWords(a.clause);
  // A question cut from its question mark ("which of our vendors does the printing, and where …?") asks.
  if (WH_WORDS.has(first)) return false;
  // What a change must leave as it is ("leave everything else exactly as it is", "Penrose stays put").
  if (onlyConstrains(a.clause)) return true;
  if (isNarrative(a.clause)) return true;
  // What someone has to do ("Someone needs to ring the supplier", "Hi, you need to ring them too") asks for it.
  if (OBLIGED.test(a.clause.replace(GREETING, ''))) return false;
  return (
    /^\W*["'“‘]/.test(a.clause) || DECLARATIVE_START.has(first) || nounCue(a.clause.replace(GREETING, '')) || labelsData(a.clause) || isNamedNews(a.clause)
  );
}

/** Whether a sentence ends by introducing what follows ("… with exactly this line:", "Contents as follows:\n1."). */
const introduces = (sentence: string) => /:\s*(?:\d+[.)]|[-*•])?\s*$/.test(sentence);

/** Whether an action asks something: its clause holds a verb this file knows (after "then", "please" …), or it is a delivery or an effect. */
const asksSomething = (a: RequestedAction) => a.kind !== 'analysis' || holdsKnownVerb(a.clause.replace(FILLER, ''));

// How a line that asks again begins, after material ("Then tell the team …", "Ask Priya to review it.", "Please …").
const REQUEST_LEAD = /^\s*(?:and\s+)?(?:then|also|next|after that|finally|please|pls|can you|could you|would you|ask|make sure)\b/i;

/**
 * The sentences that are material a sentence before introduced with a colon ("Create standup.txt with
 * this line:\nStandup moves to 10:30."): from it, until one leads with a request ("Then tell the team …").
 * An introducing sentence that asks nothing itself ("Contents exactly as follows:") is material too.
 */
function introducedSentences(actions: RequestedAction[], sentences: string[], input: string): Set<number> {
  const bounds = sentenceBounds(input, sentences);
  // A blank line before the sentence: the material before it has ended, once some was taken.
  const afterGap = (k: number) => k > 0 && /\n\s*\n/.test(input.slice(bounds[k - 1]![1], bounds[k]![0]));
  const out = new Set<number>();
  // A line that leads with an imperative ("Summarise a.txt.") asks again; "Hiring update" does not.
  const imperative = (a: RequestedAction) => {
    const first = (leadingWords(a.clause.replace(FILLER, ''))[0] ?? '').toLowerCase();
    return verbIn(first, KNOWN_VERBS) === first || verbIn(first, CHANGE_VERBS) === first;
  };
  const leadsWithRequest = (k: number) =>
    REQUEST_LEAD.test(sentences[k]!) ||
    isCourtesy(sentences[k]!.trim()) ||
    actions.some((a) => a.sentence === k && (a.kind !== 'analysis' || a.verb !== null || imperative(a)));
  let open = false;
  sentences.forEach((sentence, k) => {
    if (open && (leadsWithRequest(k) || (out.has(k - 1) && afterGap(k)))) open = false;
    else if (open) out.add(k);
    if (introduces(sentence)) {
      if (!actions.some((a) => a.sentence === k && asksSomething(a)) && k > 0) out.add(k);
      open = true;
    }
  });
  return out;
}

/** Each sentence's [start, end) in the input it was cut from. */
function sentenceBounds(input: string, sentences: string[]): [number, number][] {
  let at = 0;
  return sentences.map((text) => {
    const found = input.indexOf(text, at);
    const start = found >= 0 ? found : at;
    at = found >= 0 ? found + text.length : at;
    return [start, found >= 0 ? at : start];
  });
}

/**
 * The text a colon introduces for an action to write, verbatim from the request: the rest of the
 * action's sentence after its colon ("containing exactly: Network: Guest-5G"), or after the colon of
 * the sentence right after it that introduces material ("Contents exactly as follows:"), through the
 * lines of material that follow (introducedSentences). Null when no colon introduces a text there.
 */
export function introducedText(input: string, action: RequestedAction, actions: RequestedAction[]): string | null {
  const sentences = sentencesOf(input);
  const bounds = sentenceBounds(input, sentences);
  const material = introducedSentences(actions, sentences, input);
  // A colon inside a quote is the quote's.
  const colonIn = (k: number) => (sentences[k] === undefined ? -1 : maskQuotes(sentences[k]!).search(/:(?=\s|$)/));
  let k = action.sentence;
  // The colon of a later action in the same sentence is that action's ("… and post to the channel: done").
  if (actions.some((b) => b.sentence === k && b.n > action.n)) return null;
  if (colonIn(k) < 0 && material.has(k + 1) && introduces(sentences[k + 1] ?? '')) k += 1;
  const colon = colonIn(k);
  if (colon < 0) return null;
  let end = bounds[k]![1];
  // Then every line after it that asks nothing, up to a blank line once some is taken, or thanks.
  const asking = (j: number) => actions.some((a) => a.sentence === j) || isCourtesy(sentences[j]!.trim());
  for (let next = k + 1; next < sentences.length && (material.has(next) || !asking(next)); next++) {
    if (end > bounds[k]![1] && /\n\s*\n/.test(input.slice(end, bounds[next]![0]))) break;
    end = bounds[next]![1];
  }
  return input.slice(bounds[k]![0] + colon + 1, end).trim() || null;
}

/** A question, whether or not its clause kept the question mark ("which of our vendors …, and where …?"). */
const asksQuestion = (a: RequestedAction) => a.clause.trimEnd().endsWith('?') || WH_WORDS.has(leadingWords(a.clause.replace(FILLER, ''))[0] ?? '');

/**
 * The bare list the question before it asks about ("How many are on this list? bananas, sticky notes,
 * eggs"), whatever its items are called; a list led by a verb ("Add milk, eggs, bread") still asks.
 */
function listAfterQuestion(a: RequestedAction, sentences: string[]): boolean {
  if (a.kind !== 'analysis' || a.missing !== null) return false;
  const [first = ''] = leadingWords(a.clause);
  if (isKnownVerb(first)) return false;
  return bareListItems(a.clause) !== null && (sentences[a.sentence - 1] ?? '').trimEnd().endsWith('?');
}

/**
 * Context beside a question, not a request of its own: where its material is ("Should be in our
 * knowledge graph, I can't remember the name."), where to look ("check oncall.md"), why it is asked
 * ("Need to know before I call them."), a qualifier ("only need staging - not prod"), or what the asker
 * is doing ("Doing the weekly order."). Any other clause with a verb this file knows, or a modal, still asks.
 */
function isContextOfQuestion(a: RequestedAction): boolean {
  if (a.missing !== null || a.clause.trimEnd().endsWith('?')) return false;
  // Where to look ("open invoices.txt -", which alone would ask an effect), however it is worded.
  if (consultsOnly(a.clause)) return true;
  if (a.kind !== 'analysis') return false;
  // An aside in brackets ("(exactly 2 doesn't count)") qualifies the question; one that asks ("(and email Bob)") still asks.
  if (/^\(.*\)\W*$/s.test(a.clause.trim()) && !holdsKnownVerb(a.clause) && !asksMore(a.clause.replace(/^\(/, ''))) return true;
  const ws = leadingWords(a.clause);
  const [first = ''] = ws;
  // Why it is asked, or where the material is: whatever verbs they hold, they ask nothing more.
  if (PURPOSE.test(a.clause.trim()) || saysWhereMaterialIs(ws, a.clause)) return true;
  // Any verb this file knows, of work or of change ("only add …", "Adding it to notes.txt would help"), still asks.
  if (ws.some(isKnownVerb)) return false;
  // What the asker has to do or did themselves, with no verb this file knows ("… and I need to chase it", "I went
  // blank"), unless it is to find out more ("I need to know …") or asks the reader ("I need you to …").
  if (ASKER_OWN.test(a.clause) && !/\byou\b/i.test(a.clause)) return true;
  if (a.verb !== null || ws.some((w) => MODAL.has(w))) return false;
  return QUALIFIER_START.has(first) || (/^[a-z]{2,}ing$/.test(first) && !ING_VERBS.has(first));
}

/**
 * A line of data after a question ("Mon - tap washer, 0.5h", "Bev Collins - yes"): a line of its own, with a
 * separator or a closing figure, no verb this file knows, and not a question itself; or, right after the
 * question, a sentence that lists figures.
 */
function isDataLine(a: RequestedAction, sentences: string[], input: string): boolean {
  if (a.kind !== 'analysis' || a.verb !== null || a.missing !== null) return false;
  const sentence = (sentences[a.sentence] ?? '').trim();
  // A separator or a closing figure marks data ("Bev Collins - yes", "TP 572 lands 10:20"); "Ring Dave at 3pm" may ask.
  if (sentence.endsWith('?') || holdsKnownVerb(sentence) || !/\s[-–—]\s|:\s|,|\d\W*$/.test(sentence)) return false;
  // A line that goes on to ask ("If so, ring Dave on 07700 900123", "What about Tuesday - the late shift") is no data.
  if (asksMore(sentence) || wordsOf(sentence).some(isEffectVerb)) return false;
  const ownLine = input.split('\n').some((line) => line.replace(/^\s*(?:[-*•]|\d+[.)])?\s*/, '').trim() === sentence);
  if (ownLine && sentences.slice(0, a.sentence).some((s) => s.trimEnd().endsWith('?'))) return true;
  // Right after the question, figures listed in one sentence ("Milk £2.45, stamps £8.40, taxi for Mrs Ahmed £11.20.").
  const parts = sentence.split(/[,;]\s*(?:and\s+)?|\s+and\s+/);
  // Figures, not sums ("Also 15% of 80 and 10% of 60" asks more).
  const figure = (p: string) => /\d/.test(p) && !/%|\bof\b|[+*/×÷=]/.test(p);
  return (sentences[a.sentence - 1] ?? '').trimEnd().endsWith('?') && parts.length >= 2 && parts.every(figure);
}

// A sign-off with a name and who they are ("Cheers, Dave, Northgate Motors", "Namaste, Jen (front desk)", "- Imogen, props dept").
const SIGNED_OFF =
  /^(?:(?:cheers|thanks|thank you|thx|ta|regards|kind regards|best regards|best wishes|warm wishes|many thanks|bless you|best|all the best|love|yours|take care|danke|merci|gracias|namaste)\s*!?\s*,?\s+)\p{Lu}[\p{L}'’.-]*(?:[\s,(]+[^?]*)?$/iu;

// A name and who they are, after a dash: "- Imogen, props dept", "— Jo (PTA)"; capitalised as written.
const DASH_SIGNED = /^[-–—~]\s*\p{Lu}[\p{L}'.-]*(?:\s+\p{Lu}[\p{L}'.-]*){0,2}(?:\s*,\s*[^,()]{1,40}|\s*\([^()]{1,60}\))?\W*$/u;

/**
 * The sign-off on the last line, or the name under one ("Kind regards,\nJoanne Fraser"); a sign-off that asks
 * ("Thanks, send it to Bob", "Ta, Jo - ring me if it is", "Best, Jo (and remind Sam)") asks.
 */
function signsOff(a: RequestedAction, sentences: string[], input: string): boolean {
  if (a.sentence !== sentences.length - 1 || a.kind !== 'analysis' || a.verb !== null) return false;
  const clause = a.clause.trim();
  const asks = holdsKnownVerb(clause) || wordsOf(clause).some(isEffectVerb) || /\s[-–—]\s+\p{Ll}/u.test(clause) || asksMore(clause.replace(/^\W+/, ''));
  if (asks) return false;
  if (/^(?:\p{Lu}[\p{L}'.-]*\s*){1,3}(?:\([^()]*\))?$/u.test(clause) && isCourtesy((sentences[a.sentence - 1] ?? '').trim())) return true;
  // After a dash, on the last line, where no other line is a dash's item (the last item of a list asks).
  const line = (sentences[a.sentence] ?? '').trim();
  const dashed = input.split('\n').filter((l) => /^\s*[-–—~]\s/.test(l)).length;
  if (DASH_SIGNED.test(line) && dashed <= 1 && !isEffectVerb(wordsOf(line)[0] ?? '')) return true;
  // The name is capitalised as written (the i flag reads \p{Lu} as any letter).
  const name = /^\W*(?:[\p{L}'’!]+\s*){0,3},?\s*(\S)/u.exec(clause);
  return SIGNED_OFF.test(clause) && wordsOf(clause).length <= 12 && /\p{Lu}/u.test(name?.[1] ?? '');
}

/**
 * Statements beside a request are its material, not requests of their own ("Summarise: The office
 * opens in May. Rent is lower."), and so is the bare list a question asks about. Context beside a
 * question (where to look, why it is asked, a qualifier) and thanks anywhere are neither requests nor
 * material. Input with no request at all keeps its statements as analysis.
 */
function withoutStatements(
  actions: RequestedAction[],
  sentences: string[],
  input: string,
): { requests: RequestedAction[]; material: boolean; consulted: string[] } {
  const asks = actions.some((a) => a.clause.trimEnd().endsWith('?'));
  const introduced = introducedSentences(actions, sentences, input);
  const material = (a: RequestedAction) =>
    introduced.has(a.sentence) || isStatement(a) || (asks && (listAfterQuestion(a, sentences) || isDataLine(a, sentences, input)));
  const context = (a: RequestedAction) =>
    isCourtesy(a.clause.trim()) ||
    LEAD_IN.test(a.clause.trim()) ||
    DEAR.test(a.clause.trim()) ||
    introducesSelf(a) ||
    signsOff(a, sentences, input) ||
    (asks && isContextOfQuestion(a));
  if (actions.every((a) => material(a) || context(a))) return { requests: actions, material: false, consulted: [] };
  return {
    requests: actions.filter((a) => !material(a) && !context(a)).map((a, i) => ({ ...a, n: i + 1 })),
    material: actions.some(material),
    consulted: asks ? actions.filter((a) => consultsOnly(a.clause)).map((a) => a.clause) : [],
  };
}

/** Why an unsupported action stays unresolved, in words a person can act on. */
// Verbs that ask for a change even where the reader counts the action as work on text ("Write … to
// a.txt", "Add a note to …", "Remember that …"): only such an action may become an external call.
const CHANGE_VERBS = words(`write save store put record add append overwrite create make edit change modify update replace move
  rename remember note log stage commit insert set mark tag attach copy`);
// Change verbs that are hardly ever nouns, so they ask for a change wherever the instruction has them
// ("pls rename a.txt to b.txt", "in settings.ini change the line …"), in their base form only.
const CHANGE_ANYWHERE = words('write save overwrite create edit modify replace move rename remember append insert change');
// "make the Saturday line say …", "make it read …": an edit, though "make" alone more often asks for a list or a summary.
const MAKE_IT_SAY = /\bmake\b[^.!?]*\b(?:say|read)\b/i;
const QUESTION_WORDS = words('what which how why who whom whose when where whether is are was were does do did can could should would will has have');

// "Add up these receipts", "add them up": a total, not something added to.
const ADDS_UP = /^add(?:s|ed|ing)?\s+(?:(?:it|them|these|those|this|all|everything|the \w+)\s+)?up\b/i;

/**
 * Whether an analysis action asks only for information (an answer, a reading, a count): a question,
 * or an instruction whose first word asks for no change. Such an action never becomes a proposal to
 * write, edit, move, commit or send.
 */

export function asksOnlyInformation(action: RequestedAction): boolean {
  if (action.kind !== 'analysis') return false;
  const body = action.clause.replace(FILLER, '').trim();
  const first = (wordsOf(body)[0] ?? '').toLowerCase();
  if (body.endsWith('?') || QUESTION_WORDS.has(first)) return true;
  // The instruction is what comes before any text it gives (after a colon, or quoted).
  const instruction = wordsOf(body.split(/:\s|["“]/)[0] ?? '');
  if (instruction.some((w) => CHANGE_ANYWHERE.has(w)) || MAKE_IT_SAY.test(body)) return false;
  // "Add up these receipts" asks for a total, not for anything to be added to.
  if (ADDS_UP.test(body)) return true;
  return verbIn(first, CHANGE_VERBS) === null;
}

export function unsupportedReason(action: RequestedAction): string {
  return `asks to ${action.verb ?? 'act'}, and no configured tool can do that; it was not done`;
}

/** What a delivery that names no material of its own lacks. */
const NO_MESSAGE = 'the message to send';

/** What the action lacks, in words: 'works on something attached', 'sends "the release notes"', 'sends a message'. */
export function missingMaterialPhrase(action: RequestedAction): string {
  if (action.missing === NO_MESSAGE) return 'sends a message';
  const what = action.missing === null || /^(attach|enclos|upload)/.test(action.missing) ? `something ${action.missing ?? 'attached'}` : `"${action.missing}"`;
  return `${action.kind === 'delivery' ? 'sends' : 'works on'} ${what}`;
}

/** Why an action on material the run was never given stays unresolved. */
export function missingMaterialReason(action: RequestedAction): string {
  return `${missingMaterialPhrase(action)}, which the run was not given (a run holds only its input text, and the tenant memory when it recalls it); nothing was ${action.kind === 'delivery' ? 'sent' : 'done'} for it. Put the text in the input`;
}

/** Why the local provider leaves an analysis action unresolved, and what would perform it. */
export function needsModelReason(action: RequestedAction, preparedBy: string[]): string {
  const prepared = preparedBy.length
    ? ` Key-phrase extraction (${preparedBy.join(', ')}) prepared the text, but extracting key phrases does not ${action.verb ?? 'do this'}.`
    : '';
  return `needs a model to ${action.verb ?? 'do this'}, and this run's provider is local (no model).${prepared} Route the model to a model provider (POST /v1/routing-policies) and run it again`;
}
