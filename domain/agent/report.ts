// The final report of a tool-calling run, and how the service accounts for the request with it.
// The model lists the parts of the request, each with a verbatim quote, whether it asks for an
// effect or for information, its status, and what did it (call ids, or the answer). The service
// checks only what it can check structurally, never English words:
// - every quote stands verbatim in the request;
// - every sentence of the request (Intl.Segmenter) is quoted: at least half its letters and digits;
// - a part claimed performed by calls cites calls that ran and succeeded;
// - a part that asks for an effect is performed only by approved external calls that succeeded, each
//   call accounting for one part;
// - an external call that ran is cited by some part asking for an effect;
// - a model's answer is never checked: only a deterministic tool result is.

import { truncate } from '../text/analyze.ts';

/** The strict json_schema response format of the final report (structured outputs). */
export const REPORT_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['parts'],
  properties: {
    parts: {
      type: 'array',
      description: 'Every part of the request, in its order. Together the quotes cover every sentence of the request.',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['quote', 'asks', 'status', 'calls', 'answer', 'reason'],
        properties: {
          quote: { type: 'string', description: 'The words of the request this part accounts for, copied exactly.' },
          asks: {
            type: 'string',
            enum: ['effect', 'information'],
            description:
              'effect: a change outside this conversation (sending, writing, storing, committing, deleting); information: an answer or text you write.',
          },
          status: { type: 'string', enum: ['performed', 'unresolved'] },
          calls: { type: 'array', items: { type: 'string' }, description: 'The ids of the tool calls that did this part.' },
          answer: { type: 'string', description: 'For information: the answer itself. Otherwise empty.' },
          reason: { type: 'string', description: 'For an unresolved part: why it was not done. Otherwise empty.' },
        },
      },
    },
  },
} as const;

export const REPORT_FORMAT_NAME = 'run_report';

/** The most parts a report may list (a bound on what a run records). */
export const MAX_REPORT_PARTS = 32;

export interface ReportPart {
  quote: string;
  asks: 'effect' | 'information';
  status: 'performed' | 'unresolved';
  calls: string[];
  answer: string;
  reason: string;
}

export interface Report {
  parts: ReportPart[];
}

/** A tool call of the run as verification sees it, by the model's call id. */
export interface CallRecord {
  /** The plan step that ran it (step_N for an approved external call, call_N for a read). */
  step_id: string;
  tool: string;
  effect: 'read' | 'external';
  status: 'done' | 'not_configured' | 'failed' | 'outcome_unknown' | 'refused' | 'rejected' | 'not_run';
  /** For an external call: a person approved it (as proposed or edited). */
  approved: boolean;
  /** Its output was recomputed from its arguments and matched (deterministic tools only). */
  checked: boolean;
}

export interface PartOutcome {
  n: number;
  quote: string;
  asks: 'effect' | 'information';
  outcome: 'performed' | 'not_performed' | 'outcome_unknown';
  /** Step ids of the calls it rests on, and `answer` when the model's answer carries it. */
  by: string[];
  checked: boolean;
}

export interface Accounting {
  parts: PartOutcome[];
  unresolved: string[];
  /** Sentences of the request (by index) that some part's quote covers. */
  covered: number[];
  sentences: number;
}

const isString = (v: unknown): v is string => typeof v === 'string';

/** The report in `content`, or why there is none. Shapes are checked here, not by trusting the response format. */
export function parseReport(content: string | null): Report | string {
  if (!content?.trim()) return 'the model gave no report';
  let value: unknown;
  try {
    value = JSON.parse(content.trim());
  } catch {
    // A model that wraps its JSON in a code fence; tried only when the content itself is not JSON.
    const fenced = /^```(?:json)?\s*([\s\S]*?)```\s*$/i.exec(content.trim());
    try {
      value = fenced ? JSON.parse(fenced[1]!) : undefined;
    } catch {}
    if (value === undefined) return 'the model gave a final answer that is not the report JSON';
  }
  const parts = (value as { parts?: unknown } | null)?.parts;
  if (!Array.isArray(parts) || parts.length === 0) return 'the report lists no part of the request';
  if (parts.length > MAX_REPORT_PARTS) return `the report lists more than ${MAX_REPORT_PARTS} parts`;
  const out: ReportPart[] = [];
  for (const p of parts as Record<string, unknown>[]) {
    if (!p || typeof p !== 'object' || !isString(p.quote) || (p.asks !== 'effect' && p.asks !== 'information')) return 'a part of the report is malformed';
    if (p.status !== 'performed' && p.status !== 'unresolved') return 'a part of the report has no status';
    const calls = Array.isArray(p.calls) ? p.calls.filter(isString) : [];
    out.push({ quote: p.quote, asks: p.asks, status: p.status, calls, answer: isString(p.answer) ? p.answer : '', reason: isString(p.reason) ? p.reason : '' });
  }
  return { parts: out };
}

/** The sentences of `text` as [start, end) offsets, by the platform's own segmenter (no word lists). */
export function sentenceSpans(text: string): [number, number][] {
  const spans: [number, number][] = [];
  // A fixed locale, so every worker segments a request alike.
  for (const s of new Intl.Segmenter('en', { granularity: 'sentence' }).segment(text)) {
    if (s.segment.trim()) spans.push([s.index, s.index + s.segment.length]);
  }
  return spans;
}

/** Every [start, end) at which `quote` stands in `text`. */
function occurrences(text: string, quote: string): [number, number][] {
  const found: [number, number][] = [];
  for (let i = text.indexOf(quote); i >= 0; i = text.indexOf(quote, i + 1)) found.push([i, i + quote.length]);
  return found;
}

const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;

/**
 * Whether quotes cover the sentence [s, e): at least half of its letters and digits lie inside quotes
 * (the parts of them within the sentence). So a quote of "the" or of "France. Send" accounts for no
 * sentence, while an instruction quoted without its connectives ("and", "then") or a clause of context does.
 */
function quotedEnough(text: string, s: number, e: number, spans: readonly [number, number][]): boolean {
  let total = 0;
  let inside = 0;
  for (let i = s; i < e; i++) {
    if (!LETTER_OR_DIGIT.test(text[i]!)) continue;
    total += 1;
    if (spans.some(([qs, qe]) => qs <= i && i < qe)) inside += 1;
  }
  return total === 0 || inside * 2 >= total;
}

const quoted = (p: { n: number; quote: string }) => `part ${p.n} "${truncate(p.quote, 120)}"`;

/** What one performed part rests on, or why it is not performed. */
function assessPart(
  part: ReportPart,
  n: number,
  calls: ReadonlyMap<string, CallRecord>,
  claimed: Map<string, number>,
): { outcome: PartOutcome; problem: string | null } {
  const base = { n, quote: part.quote, asks: part.asks };
  const notDone = (problem: string) => ({ outcome: { ...base, outcome: 'not_performed' as const, by: [], checked: false }, problem });
  if (part.status === 'unresolved') return notDone(`not done; ${part.reason.trim() ? truncate(part.reason.trim(), 200) : 'the model gave no reason'}`);
  const cited = part.calls.map((id) => ({ id, call: calls.get(id) }));
  const unknown = cited.filter((c) => !c.call);
  if (unknown.length) return notDone(`it cites ${unknown.map((c) => `"${truncate(c.id, 40)}"`).join(', ')}, which no tool call of this run has`);
  const records = cited.map((c) => c.call!);
  const unsure = records.filter((r) => r.status === 'outcome_unknown');
  if (unsure.length) {
    const by = unsure.map((r) => r.step_id);
    return {
      outcome: { ...base, outcome: 'outcome_unknown', by, checked: false },
      problem: `the outcome of ${by.join(', ')} is unknown; check with the receiver`,
    };
  }
  const failed = records.filter((r) => r.status !== 'done');
  if (failed.length) return notDone(`${failed.map((r) => `${r.step_id} (${r.tool}) ${r.status}`).join(', ')}: not done`);
  if (part.asks === 'effect') {
    const effects = records.filter((r) => r.effect === 'external' && r.approved);
    if (effects.length === 0) return notDone('it asks for an effect, and no approved external call that succeeded did it');
    // One effect performs one part: a call another part already accounts for performs nothing more.
    const taken = effects.filter((r) => claimed.has(r.step_id));
    if (taken.length) return notDone(`${taken.map((r) => r.step_id).join(', ')} already accounts for part ${claimed.get(taken[0]!.step_id)}`);
    for (const r of effects) claimed.set(r.step_id, n);
    return { outcome: { ...base, outcome: 'performed', by: records.map((r) => r.step_id), checked: records.every((r) => r.checked) }, problem: null };
  }
  const answered = part.answer.trim().length > 0;
  if (!answered && records.length === 0) return notDone('the report gives neither an answer nor a call for it');
  const by = [...records.map((r) => r.step_id), ...(answered ? ['answer'] : [])];
  // The model's own words are never checked; a part resting only on recomputed tool results is.
  const checked = !answered && records.every((r) => r.checked);
  return { outcome: { ...base, outcome: 'performed', by, checked }, problem: null };
}

/**
 * Accounts for the request with the report: each part's outcome, and every item left unresolved
 * (parts not performed, sentences no part quotes, effects no part accounts for).
 */
export function accountFor(input: string, report: Report | string, calls: ReadonlyMap<string, CallRecord>): Accounting {
  const sentences = sentenceSpans(input);
  const unresolved: string[] = [];
  const parts: PartOutcome[] = [];
  const covered = new Set<number>();
  const spans: [number, number][] = [];
  const claimed = new Map<string, number>();
  if (typeof report === 'string') {
    unresolved.push(`The request was not accounted for: ${report}.`);
  } else {
    report.parts.forEach((part, i) => {
      const n = i + 1;
      const at = part.quote.trim() ? occurrences(input, part.quote) : [];
      if (at.length === 0) {
        parts.push({ n, quote: part.quote, asks: part.asks, outcome: 'not_performed', by: [], checked: false });
        unresolved.push(`${quoted({ n, quote: part.quote })}: its quote does not stand in the request, so it accounts for nothing.`);
        return;
      }
      spans.push(...at);
      const { outcome, problem } = assessPart(part, n, calls, claimed);
      parts.push(outcome);
      if (problem) unresolved.push(`${quoted(outcome)}: ${problem.replace(/\.$/, '')}.`);
    });
  }
  sentences.forEach(([s, e], k) => {
    if (quotedEnough(input, s, e, spans)) covered.add(k);
  });
  // With no report, every sentence is simply not done (the line above says why); with one, a sentence no part quotes is named.
  const uncovered = typeof report === 'string' ? 'not done' : 'no part of the report accounts for it';
  sentences.forEach(([s, e], k) => {
    if (!covered.has(k)) unresolved.push(`sentence ${k + 1} "${truncate(input.slice(s, e).trim(), 120)}": ${uncovered}.`);
  });
  const citedByEffects = new Set(
    (typeof report === 'string' ? [] : report.parts).filter((p) => p.asks === 'effect' && p.status === 'performed').flatMap((p) => p.calls),
  );
  for (const [id, call] of calls) {
    if (call.effect !== 'external' || citedByEffects.has(id)) continue;
    if (call.status === 'done')
      unresolved.push(`${call.step_id} (${call.tool}) was performed, and no part of the request that asks for an effect accounts for it.`);
    if (call.status === 'outcome_unknown')
      unresolved.push(
        `${call.step_id} (${call.tool}) may have been performed (its outcome is unknown), and no part of the request that asks for an effect accounts for it.`,
      );
  }
  return { parts, unresolved, covered: [...covered].sort((a, b) => a - b), sentences: sentences.length };
}
