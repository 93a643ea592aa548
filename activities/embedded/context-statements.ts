// Statements that give what the request's next part works on, read as context rather than as parts of
// their own: "Response times this week were 212 ms, 187 ms and 240 ms. What's the average?", "Mrs Adeyemi
// rang, her new mobile is 07700 900 117. Update her row in customers.csv". The English reader of
// domain/planning/ made each such sentence an action of its own, and no answer the small model could
// write for it is checked, so every such run ended needs_attention whatever its real parts did. A
// capable model quotes such a sentence with the part it serves (the report's quotes still cover it).
// English words, so this lives in the embedded adapter only. Conservative on purpose: a sentence that
// might ask for something stays a part of its own, unresolved where nothing does it.
import { asksOnlyInformation, type RequestedAction } from '../../domain/planning/requested-actions.ts';
import { pathsNamed } from '../../domain/agent/request-spans.ts';
import { addressed, isQuestion, writes } from './answer-part.ts';
import { asksFigure } from './asks-figure.ts';

// A verb that states what is or what happened ("were", "rang", "has", "got", "passed").
const STATING = /^(?:is|are|was|were|has|have|had|did|does|got|came|went|rang|called|said|told|sent|left|keeps?|[a-z]{2,}ed)$/;
// What an instruction may open with even where a stating verb follows ("Make sure the file is updated").
const INSTRUCTING = new Set(
  'make ensure remember note mark log put add keep check set get let please pls do be go use take bring move change update fix call ring email text ask tell'.split(
    ' ',
  ),
);
// Words before what a sentence says ("Hi,", "Lovely news:", "Hello, Fr Michael has …").
const LEAD = /^\W*(?:(?:hi|hiya|hey|hello|morning|ok|okay|right|so|anyway|fyi|ps)\b\W*|[\p{L}\s]{1,20}news\s*[:,-]\s*)*/iu;
// Words that point back to what a statement gave ("Add them up", "Update her row", "post it").
const POINTS_BACK = new Set('it its them they their theirs he she his her him hers that those these this there'.split(' '));

// Words that ask, wherever they stand ("… how many hours have they booked", "I need the keypad code").
const ASKING = new Set(
  'what which who whom whose when where why how whether need needs needed want wants wanted should must please pls could can would asking asks asked wondering go goes belong belongs'.split(
    ' ',
  ),
);

// What is to be done, worded as what is ("… is to be added to contacts.txt", "… has to go into it").
const OBLIGES = /\b(?:is|are|was|were)\s+to\s+be\b|\bha(?:s|ve|d)\s+(?:got\s+)?to\b/i;

const wordsOf = (text: string) => text.toLowerCase().match(/[\p{L}\p{N}'’]+/gu) ?? [];

/** A clause worded as a statement: a stating verb among its first words, after a subject; or a short label and its figures ("Mileage this month: 42, 17.5"). */
export function statesSomething(clause: string): boolean {
  // A path is one word, however many parts it has ("invoices.csv in /srv/share has the statuses").
  const body = pathsNamed(clause)
    .reduce((text, p) => text.split(p).join(' path '), clause)
    .replace(LEAD, '');
  const words = wordsOf(body);
  if (!words.length || INSTRUCTING.has(words[0]!) || words.some((w) => ASKING.has(w)) || OBLIGES.test(body)) return false;
  if (words.slice(1, 8).some((w) => STATING.test(w))) return true;
  const label = /^([^:]{1,40}):\s+(.*)$/.exec(body);
  return label !== null && wordsOf(label[1]!).length <= 4 && /\d/.test(label[2]!) && !/\d/.test(label[1]!);
}

/** Whether an action could be context: a statement asking nothing, no change, no question, no writing, nothing missing. */
function isStatement(a: RequestedAction, changes: ReadonlySet<number>): boolean {
  return (
    a.kind === 'analysis' &&
    a.verb === null &&
    a.missing === null &&
    !changes.has(a.n) &&
    asksOnlyInformation(a) &&
    !isQuestion(a) &&
    !writes(a) &&
    !addressed(a) &&
    statesSomething(a.clause)
  );
}

/**
 * Whether a part works on what the statement before it gives: a request that points back to it ("Add them up", "Update
 * her row"), a figure asked of its numbers ("… were 212 ms, 187 ms. What's the average?"), or a question that names no
 * path of its own where the statement names one. News beside an unrelated question ("Tom's number 555 0142 has changed.
 * What does notes.txt say?") may ask for something, and so may a statement before thanks ("… Thanks for that").
 */
function worksOn(a: RequestedAction, statement: RequestedAction): boolean {
  const asks = a.kind !== 'analysis' || a.verb !== null || isQuestion(a) || addressed(a) || asksFigure(a);
  if (asks && wordsOf(a.clause).some((w) => POINTS_BACK.has(w))) return true;
  if (asksFigure(a) && /\d/.test(statement.clause)) return true;
  return isQuestion(a) && pathsNamed(a.clause).length === 0 && pathsNamed(statement.clause).length > 0;
}

/**
 * The actions without the statements that are context for the part after them (that part a question, or one
 * that points back: "Add them up"), renumbered; the part they serve takes their words into its scope, so a
 * path a statement names ("The figures are in north.txt") is still that part's to read. A statement no
 * delivery takes its message from; one that ends the request, or stands alone, stays a part.
 */
export function withoutContextStatements(actions: RequestedAction[], changes: ReadonlySet<number>): RequestedAction[] {
  const sources = new Set(actions.flatMap((a) => (a.messageFrom === undefined ? [] : [a.messageFrom])));
  const context = new Map<number, number>();
  let served: RequestedAction | undefined;
  for (let i = actions.length - 1; i >= 0; i--) {
    const a = actions[i]!;
    if (served && !sources.has(a.n) && isStatement(a, changes) && worksOn(served, a)) context.set(a.n, served.n);
    else served = a;
  }
  // After a question, a statement that says where its answer is ("Has Harbour Cafe paid invoice 1042 yet? invoices.csv
  // has the statuses.") is that question's.
  for (let i = 1; i < actions.length; i++) {
    const [question, a] = [actions[i - 1]!, actions[i]!];
    if (context.has(a.n) || context.has(question.n) || sources.has(a.n) || !isStatement(a, changes)) continue;
    if (isQuestion(question) && pathsNamed(question.clause).length === 0 && pathsNamed(a.clause).length > 0) context.set(a.n, question.n);
  }
  if (!context.size || context.size === actions.length) return actions;
  const kept = actions.filter((a) => !context.has(a.n));
  const renumber = new Map(kept.map((a, i) => [a.n, i + 1]));
  return kept.map((a) => {
    const given = actions.filter((c) => context.get(c.n) === a.n);
    const scope = given.length ? [a.scope ?? a.clause, ...given.map((c) => c.clause)].join(' ') : a.scope;
    return {
      ...a,
      n: renumber.get(a.n)!,
      ...(a.messageFrom === undefined ? {} : { messageFrom: renumber.get(a.messageFrom)! }),
      ...(scope === undefined ? {} : { scope }),
    };
  });
}
