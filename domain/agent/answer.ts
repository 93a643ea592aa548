// A model's final answer, read per requested action. An analysis action counts
// as performed by the answer only when the answer has a specific part for that
// very action number: "Done." or an empty plan's bare reply performs nothing.
// The model answers in the JSON of ANSWER_FORMAT (domain/agent/plan-schema.ts);
// an answer in sections headed "Action N:" is read too, since weaker models
// drift into prose.

export type AnswerPart = { status: 'performed'; result: string } | { status: 'unresolved'; reason: string };

/** Words that say something was done without doing it. */
const PLACEHOLDER = /^(?:done|completed?|finished|ok(?:ay)?|yes|n\/?a|none|nothing|performed|see above|as requested|tbd|todo|-+|\.+)[.!]*$/i;

/** At least this many words: a part shorter than that cannot carry work on an action. */
const MIN_WORDS = 3;

/** Whether `text` could be work on an action: not empty, not a placeholder, more than a word or two. */
export function isSpecific(text: string): boolean {
  const t = text.trim();
  return t.length > 0 && !PLACEHOLDER.test(t) && t.split(/\s+/).filter(Boolean).length >= MIN_WORDS;
}

function jsonOf(answer: string): unknown {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(answer);
  const text = (fenced ? fenced[1]! : answer).trim();
  if (!text.startsWith('{')) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function partsFromJson(value: unknown): Map<number, AnswerPart> | null {
  const actions = (value as { actions?: unknown } | null)?.actions;
  if (!Array.isArray(actions)) return null;
  const parts = new Map<number, AnswerPart>();
  for (const item of actions as { action?: unknown; status?: unknown; result?: unknown; reason?: unknown }[]) {
    if (!item || typeof item !== 'object' || !Number.isInteger(item.action) || parts.has(item.action as number)) continue;
    const n = item.action as number;
    if (item.status === 'unresolved') parts.set(n, { status: 'unresolved', reason: typeof item.reason === 'string' ? item.reason : '' });
    else if (typeof item.result === 'string') parts.set(n, { status: 'performed', result: item.result });
  }
  return parts;
}

const HEADING = /^[ \t]*(?:#{1,6}[ \t]*)?\**[ \t]*action[ \t]+(\d+)[ \t]*\**[ \t]*[:.)\-–—]?\**[ \t]*/gim;

function partsFromHeadings(answer: string): Map<number, AnswerPart> {
  const parts = new Map<number, AnswerPart>();
  const heads = [...answer.matchAll(HEADING)];
  heads.forEach((h, i) => {
    const n = Number(h[1]);
    const end = i + 1 < heads.length ? heads[i + 1]!.index : answer.length;
    if (!parts.has(n)) parts.set(n, { status: 'performed', result: answer.slice(h.index + h[0].length, end).trim() });
  });
  return parts;
}

/** The answer's part for each action number it addresses. */
export function answerParts(answer: string | null | undefined): Map<number, AnswerPart> {
  if (!answer) return new Map();
  return partsFromJson(jsonOf(answer)) ?? partsFromHeadings(answer);
}
