// A question about what a tool read, answered on the embedded model by one line of that result, as
// the tool returned it: the small model only chooses the line, by its own likelihood, and the answer is
// a verbatim quote of a tool's result, which verification can find there. The question's pull on each
// line is measured against the same text asked nothing in particular, so a line is not chosen for being
// short or common; and the chosen line must lead the next by a margin calibrated on the fresh eval's
// tuning half, or the question stays unresolved. A question with two right lines ("who speaks
// Portuguese?") has no clear leader, and so is unresolved too: an answer of one of them would be wrong.
import type { ChatMessage } from '../../domain/chat/types.ts';
import type { StepResult } from '../../domain/runs/run-types.ts';
import { truncate } from '../../domain/text/analyze.ts';
import type { AgentDeps, CallContext } from '../model-call.ts';
import { leader, type RankStopped, rankScores } from './rank.ts';
import { needsStronger } from '../../domain/planning/needs-stronger.js';

/** Lines longer than this are cut for ranking and answered whole. */
const LINE_RANKED_MAX = 300;
/** At most this many lines are ranked; a longer result leaves the question unresolved. */
const LINES_MAX = 60;

/**
 * The least lead, in the difference of log-likelihoods with and without the question, the chosen line
 * must have over the next; calibrated on the fresh eval's tuning half (docs/models.md).
 */
const MIN_LINE_LEAD = 4;

/**
 * The least lead for a line that alone holds a word of the question, among several lines: the text
 * itself singles it out, and the model's choice agrees. Calibrated on the fresh eval's tuning half.
 */
const MIN_SINGLED_OUT_LEAD = 1;

const INSTRUCTIONS = 'Quote the one line of the text that answers the question.';
const PREFIX = 'The line that answers it: "';
/** What a lone line a tool returned is ranked against: that the text does not answer the question. */
const NO_LINE = 'None: the text does not say.';
/** What the lines are ranked against: the same text, asked nothing in particular. */
const NEUTRAL = 'What does the text say?';

/** One item of an MCP result's content, as far as an answer reads it. */
type ContentItem = { type?: string; text?: string; resource?: { text?: unknown } };

/**
 * The text of a tool's result that an answer may quote: an MCP result's text content (and text resources) as
 * it is; its structured content as JSON when it has no content items; anything else as JSON. Nothing ('')
 * for a result whose content is only an image, audio or a file's bytes (a base64 blob is no answer, however
 * many of the question's words its file name holds), or one whose content was cut short at
 * TOOL_RESULT_MAX_CHARS (what it held past the cut is unknown).
 */
export function textOf(output: unknown): string {
  const result = output as { content?: ContentItem[]; structuredContent?: unknown; truncated_from_chars?: unknown; excerpt?: unknown } | null;
  const content = typeof result?.truncated_from_chars === 'number' ? wholeContentOf(result.excerpt) : result?.content;
  if (content === null) return '';
  if (!Array.isArray(content)) return JSON.stringify(output);
  // Text items, and embedded resources given as text (a blob is bytes).
  const texts = content.flatMap((c) =>
    c?.type === 'text' && typeof c.text === 'string' ? [c.text] : c?.type === 'resource' && typeof c.resource?.text === 'string' ? [c.resource.text] : [],
  );
  if (texts.length) return texts.join('\n');
  return content.length === 0 && result?.structuredContent != null ? JSON.stringify(result.structuredContent) : '';
}

/**
 * The content items of a result cut short, when the cut fell after them: the shown result is `{"content":[…],
 * "structuredContent":…}` cut to TOOL_RESULT_MAX_CHARS, and a server that gives its text twice (as content and as
 * structured content) passes the limit at half its size. Null when the content itself was cut.
 */
function wholeContentOf(excerpt: unknown): ContentItem[] | null {
  if (typeof excerpt !== 'string') return null;
  // Inside a JSON string a quote is escaped, so this ends the content array wherever it stands.
  const end = excerpt.indexOf('],"structuredContent":');
  if (!excerpt.startsWith('{"content":[') || end < 0) return null;
  try {
    const parsed = JSON.parse(`${excerpt.slice(0, end + 1)}}`) as { content?: unknown };
    return Array.isArray(parsed.content) ? (parsed.content as ContentItem[]) : null;
  } catch {
    return null;
  }
}

/** The scalar values an object holds directly or in arrays of scalars, in order. */
function scalarsOf(o: Record<string, unknown>): string[] {
  return Object.values(o).flatMap((v) => {
    if (typeof v === 'string' || typeof v === 'number') return [String(v)];
    if (Array.isArray(v)) return v.filter((x) => typeof x === 'string' || typeof x === 'number').map(String);
    return [];
  });
}

/** Each object of a JSON document as one line of its scalar values ("Inês Carvalho — person — Speaks Portuguese"). */
function jsonLines(value: unknown, into: string[]): void {
  if (Array.isArray(value)) for (const v of value) jsonLines(v, into);
  else if (value && typeof value === 'object') {
    const own = scalarsOf(value as Record<string, unknown>);
    if (own.length) into.push(own.join(' — '));
    for (const v of Object.values(value)) if (v && typeof v === 'object') jsonLines(v, into);
  }
}

/** The lines of one result's text: a JSON document's objects, or the text's own non-empty lines. */
function linesOfText(text: string): string[] {
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed && typeof parsed === 'object') {
      const lines: string[] = [];
      jsonLines(parsed, lines);
      return lines;
    }
  } catch {
    // Not JSON: its own lines.
  }
  return text.split(/\r?\n/).map((l) => l.trim());
}

/** Every distinct line the reads that ran returned. */
export function resultLines(results: StepResult[]): string[] {
  const lines = results.filter((r) => r.status === 'done' && r.output !== null).flatMap((r) => linesOfText(textOf(r.output)));
  return [...new Set(lines.filter((l) => /[\p{L}\p{N}]/u.test(l)))];
}

export type LineSource = 'given' | 'asked' | 'unasked';

export type LineAnswer = { kind: 'line'; line: string } | { kind: 'unsure'; reason: string } | RankStopped;

/** The line of `lines` that answers `question`, when the model's choice of it is clear enough. */
export async function answerLine(
  deps: AgentDeps,
  c: CallContext,
  callKey: string,
  question: string,
  lines: string[],
  /**
   * Where the lines come from: the request's own text (a lone sentence is its answer), a read of what
   * the request named, or a read that took nothing from it (the whole graph, the allowed folders), whose
   * text was not fetched for this question, so no line of it is singled out by it. A lone line a tool
   * returned must still lead saying that none answers (a one-entity graph is no answer to every question about it).
   */
  source: LineSource = 'asked',
): Promise<LineAnswer> {
  if (lines.length > LINES_MAX) return { kind: 'unsure', reason: needsStronger(`the result has more lines than the small model can choose among`) };
  // A lone sentence the request gives is its answer as it stands where it holds a word of the question ("Which city hosts
  // the conference? 'The 2027 conference will be held in Oslo …'"); else it must lead "None" as a tool's lone line must
  // ("What is the deadline in this note: 'Please reply soon.'"). A sentence that shares only the question's subject still
  // passes, a known weak point: asking for two words loses right answers such as that conference's.
  const loneGiven = lines.length === 1 && source === 'given';
  if (loneGiven && sharedTellingWords(question, lines[0]!) >= 1) return { kind: 'line', line: lines[0]! };
  const ranked = lines.length === 1 ? [...lines, NO_LINE] : lines;
  const text = lines.map((l) => truncate(l, LINE_RANKED_MAX)).join('\n');
  const asked = (q: string): ChatMessage[] => [
    { role: 'system', content: INSTRUCTIONS },
    { role: 'user', content: `Text:\n${text}\n\nQuestion: ${q}` },
  ];
  const candidates = ranked.map((l) => `${truncate(l, LINE_RANKED_MAX)}"`);
  const withQuestion = await rankScores(deps, c, `${callKey}:asked`, asked(question), candidates, PREFIX);
  if ('kind' in withQuestion) return withQuestion;
  const neutral = await rankScores(deps, c, `${callKey}:neutral`, asked(NEUTRAL), candidates, PREFIX);
  if ('kind' in neutral) return neutral;
  const { best, lead } = leader(withQuestion.map((s, i) => s - neutral[i]!));
  // A narrower lead stands where the line is the only one that holds a word of the question ("saturday").
  const singledOut = best < lines.length && source !== 'unasked';
  const needed =
    singledOut && holdsOwnId(question, lines[best]!, lines)
      ? 0
      : singledOut && holdsOwnWord(question, lines[best]!, lines)
        ? MIN_SINGLED_OUT_LEAD
        : MIN_LINE_LEAD;
  if (lead < needed || best >= lines.length)
    return { kind: 'unsure', reason: needsStronger(`the small model could not tell clearly which line of the result answers it`) };
  // That lone sentence, so ranked, may answer in its own words ("due on Friday" for "the deadline").
  if (!loneGiven && !sharesTellingWord(question, lines[best]!, lines))
    return { kind: 'unsure', reason: needsStronger(`the line the small model chose has none of the question's words that tell the lines apart`) };
  return { kind: 'line', line: lines[best]! };
}

// Words too common to tell lines apart, whatever the text.
const COMMON = new Set(
  'the and for not but are was were has have had does did who whom whose what which when where why how this that these those with from its our your their his her she him they them you any all can could would should will about into out'.split(
    ' ',
  ),
);

/** The words of a text that can tell lines apart: lowercased, three letters or more, or any number. */
function tellingWords(text: string): Set<string> {
  return new Set((text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => (w.length >= 3 || /\d/.test(w)) && !COMMON.has(w)));
}

/** How many of the question's telling words the text holds. */
const sharedTellingWords = (question: string, text: string) => {
  const held = tellingWords(text);
  return [...tellingWords(question)].filter((w) => held.has(w)).length;
};

/**
 * How much each line holds of the question's words that tell the lines apart (words that stand in
 * some of the lines, not all): each such word counts one, shared among the lines that hold it.
 */
function tellingWeights(question: string, lines: string[]): number[] {
  const inLines = lines.map(tellingWords);
  const weights = lines.map(() => 0);
  for (const w of tellingWords(question)) {
    const holders = inLines.flatMap((l, i) => (l.has(w) ? [i] : []));
    if (holders.length < lines.length) for (const i of holders) weights[i]! += 1 / holders.length;
  }
  return weights;
}

/**
 * Whether the line, among several, is singled out by the text itself: it holds a whole telling word's
 * worth (one no other line holds, or several it shares), and more than any other line ("backup" in the
 * header and "saturday" in a row, for "who is the backup on saturday?", single out neither).
 */
export function holdsOwnWord(question: string, line: string, lines: string[]): boolean {
  const at = lines.indexOf(line);
  if (lines.length < 2 || at < 0) return false;
  const weights = tellingWeights(question, lines);
  return weights[at]! >= 1 && weights.every((w, i) => i === at || w < weights[at]!);
}

/** The question's ids: words with a digit, three characters or more ("4417", "LT-0457", "HX-2210"), lowercased. */
const idsOf = (text: string) => new Set((text.toLowerCase().match(/[\p{L}\p{N}]+(?:-[\p{L}\p{N}]+)*/gu) ?? []).filter((w) => w.length >= 3 && /\d/.test(w)));

/**
 * Whether the line is the one row of the result that holds an id the question names ("whose extension is 4417?"): the
 * text itself picks it out, so the model's first choice stands on it with no lead over the next.
 */
export function holdsOwnId(question: string, line: string, lines: string[]): boolean {
  const holding = (id: string) => lines.filter((l) => idsOf(l).has(id));
  return [...idsOf(question)].some((id) => {
    const held = holding(id);
    return held.length === 1 && held[0] === line;
  });
}

/**
 * Evidence that the chosen line is about what was asked: of the question's words that stand in some of
 * the lines but not all ("saturday" in "who's on call saturday?"), the line holds some, and no other
 * line holds more ("What size does Gustavo take?" is not answered by Lena's "Boot size: 39" beside
 * Gustavo's own line). Among several lines, a question none of whose words tells them apart ("and who
 * is the backup that day") gives no such evidence, so no line of them answers it; a lone line is
 * checked against "None" instead, and must hold one of the question's words.
 */
export function sharesTellingWord(question: string, line: string, lines: string[]): boolean {
  // A lone line a tool returned must hold some word of a question that has any: a search's "No matches found" holds none.
  if (lines.length === 1) {
    const asked = [...tellingWords(question)];
    return asked.length === 0 || asked.some((w) => tellingWords(line).has(w));
  }
  const weights = tellingWeights(question, lines);
  const own = weights[lines.indexOf(line)] ?? 0;
  return own > 0 && weights.every((w) => w <= own);
}
