// A plan's report in the tool-calling protocol's form (domain/agent/report.ts), for the planners that
// read the request into numbered actions with the English reader of this folder: the embedded model's
// adapter (activities/embedded/) and the local provider. One part per requested action, quoted where
// its words stand in the request; verification reads it structurally, as it reads any model's report,
// and checks every claim in it against the calls that ran.
import type { ReportPart } from '../agent/report.ts';
import { sentencesOf, truncate } from '../text/analyze.ts';
import type { Plan, PlanStep } from './plan.ts';
import type { RequestedAction } from './requested-actions.ts';
import { needsStronger } from './needs-stronger.js';

/** A tool call's result as the transcript shows it to the model. */
export interface ShownResult {
  status: string;
  detail: string;
  output?: unknown;
}

/** An answer written for an action (the embedded model's; the local provider writes none). */
export type ActionAnswer = { action: number; status: 'performed'; result: string } | { action: number; status: 'unresolved'; reason: string };

/** Where `needle` stands in `text` from `from` on, case aside; -1 when it does not. */
function indexIn(text: string, needle: string, from: number): number {
  if (!needle) return -1;
  const exact = text.indexOf(needle, from);
  return exact >= 0 ? exact : text.toLowerCase().indexOf(needle.toLowerCase(), from);
}

/**
 * Each action's quote: the request from where its words begin to where the next action's begin (the
 * first from the start, the last to the end), so the quotes are verbatim and together cover every
 * sentence, context included, as a capable model quotes a request.
 */
export function quotesOf(input: string, actions: RequestedAction[]): string[] {
  const sentences = sentencesOf(input);
  let at = 0;
  const sentenceStarts = sentences.map((text) => {
    const found = indexIn(input, text, at);
    if (found >= 0) at = found + text.length;
    return found;
  });
  let from = 0;
  const starts = actions.map((a, i) => {
    // The first action of its sentence starts where the sentence does ("Then book …", not "book …").
    const firstOfSentence = i === 0 || actions[i - 1]!.sentence !== a.sentence;
    const sentenceStart = sentenceStarts[a.sentence] ?? -1;
    let start = firstOfSentence && sentenceStart >= from ? sentenceStart : indexIn(input, a.clause, from);
    if (start < 0) start = from;
    from = Math.max(from, start);
    return start;
  });
  const bounds = [...new Set([0, ...starts.slice(1)])].sort((x, y) => x - y);
  return starts.map((start, i) => {
    const begin = i === 0 ? 0 : start;
    const end = bounds.find((b) => b > begin) ?? input.length;
    return input.slice(begin, end).trim() || input.trim();
  });
}

/** What a result says of a call that did not succeed. */
const notDone = (step: PlanStep, r: ShownResult | undefined) => (r ? `${step.tool} ${r.status}: ${truncate(r.detail, 160)}` : `${step.tool} was not run`);

const part = (quote: string, asks: ReportPart['asks']) => ({ quote, asks, calls: [] as string[], answer: '', reason: '' });

/**
 * The report of a run planned by actions: one part per requested action, its quote where the action's words
 * stand, asking for an effect when a step that covers it is external (or no tool could do it), with the
 * calls that did it and the answer written for it, or why it is unresolved. It claims a part performed
 * only as the results show it; verification checks every claim all the same.
 */
export function planReport(
  input: string,
  plan: Plan,
  actions: RequestedAction[],
  parts: ActionAnswer[],
  results: ReadonlyMap<string, ShownResult>,
  callIdOf: (step: PlanStep) => string,
  /** Actions that ask for a change (the catalog offered them an external tool, or their words ask for one): an answer never performs one. */
  changes: ReadonlySet<number> = new Set(),
): { parts: ReportPart[] } {
  const quotes = quotesOf(input, actions);
  const gapOf = new Map((plan.gaps ?? []).map((g) => [g.action, g.reason]));
  return {
    parts: actions.map((a, i): ReportPart => {
      const steps = plan.steps.filter((s) => (s.covers ?? []).includes(a.n));
      const external = steps.filter((s) => s.effect === 'external');
      const asks = external.length > 0 || a.kind !== 'analysis' || changes.has(a.n) ? 'effect' : 'information';
      const base = part(quotes[i]!, asks);
      const unresolved = (reason: string): ReportPart => ({ ...base, status: 'unresolved', reason });
      const gap = gapOf.get(a.n);
      if (gap !== undefined) return unresolved(gap);
      if (asks === 'effect') {
        if (external.length === 0)
          return unresolved(
            changes.has(a.n)
              ? needsStronger('it asks for a change, and the small model chose no tool of this run to make it')
              : 'no tool of this run performs it',
          );
        // Performed as far as the calls went: a call of unknown outcome is cited, so the receipt says so.
        const failed = external.filter((s) => !['done', 'outcome_unknown'].includes(results.get(callIdOf(s))?.status ?? ''));
        // Unresolved, citing the calls that were made, so no call of it counts as an effect nobody asked for.
        if (failed.length) return { ...unresolved(failed.map((s) => notDone(s, results.get(callIdOf(s)))).join('; ')), calls: external.map(callIdOf) };
        return { ...base, status: 'performed', calls: external.map(callIdOf) };
      }
      const done = steps.filter((s) => results.get(callIdOf(s))?.status === 'done');
      const answered = parts.find((p) => p.action === a.n);
      if (answered?.status === 'performed') return { ...base, status: 'performed', calls: done.map(callIdOf), answer: answered.result };
      if (answered?.status === 'unresolved') return unresolved(answered.reason || 'the model wrote no answer for it');
      const failed = steps.filter((s) => results.get(callIdOf(s))?.status !== 'done');
      return unresolved(failed.length ? failed.map((s) => notDone(s, results.get(callIdOf(s)))).join('; ') : 'nothing answered it');
    }),
  };
}
