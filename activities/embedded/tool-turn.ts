// The embedded model behind the tool-calling protocol: its turns, as a tool-calling run asks them
// (activities/tool-turn.ts), made the way a 135M model can make them. The first turn plans action by
// action (plan-by-choice.ts: word lists, likelihood ranking, grammars) and calls the plan's reads; the
// next writes the answers (answer-part.ts) and proposes the plan's external calls, their messages
// written before the approval; the last gives the report. The workflow governs these calls as it
// governs any model's, and verification reads the report structurally. What the adapter carries from
// turn to turn rides in its own assistant messages (the transcript is the run's, in its history).
import type { ProposedCall } from '../../domain/agent/admission.ts';
import { protocolArgumentProblems } from '../../domain/agent/tool-args.ts';
import { callArguments, givenArguments } from '../../domain/agent/fixed-arguments.ts';
import type { ChatMessage } from '../../domain/chat/types.ts';
import { withAnsweredMessages, withDeliveryMessages } from '../../domain/planning/delivery-steps.ts';
import { messageSpan } from '../../domain/planning/material.ts';
import type { Plan, PlanHint, PlanStep } from '../../domain/planning/plan.ts';
import { asksOnlyInformation, type RequestedAction, requestedActions } from '../../domain/planning/requested-actions.ts';
import type { LoopStop, StepResult } from '../../domain/runs/run-types.ts';
import { isToolId, type ServerToolCatalog } from '../../domain/tools.ts';
import { withRecalledText } from '../agent.ts';
import type { AgentDeps, CallContext } from '../model-call.ts';
import { actionOptions } from '../../domain/agent/plan-options.ts';
import { answerPart, asksYesOrNo, type NumberedPart } from './answer-part.ts';
import { resultLines } from './answer-lines.ts';
import { asksFigure, FIGURE_REASON } from './asks-figure.ts';
import { chooseCalculation, writtenExpression } from './figure.ts';
import { alphabeticalAnswer, asksAlphabeticalOrder } from './sort-list.ts';
import { asksTimeNow, isTimeZoneKey } from './time-zones.ts';
import { planByChoice } from './plan-by-choice.ts';
import { withoutContextStatements } from './context-statements.ts';
import { planReport, type ShownResult } from '../../domain/planning/plan-report.ts';
import { callIdOf, copiesInstruction, protocolArguments, proposedCall, wireCall } from './report.ts';
import { needsStronger } from '../../domain/planning/needs-stronger.js';

const TIME_NOT_YES_OR_NO = needsStronger('the time-zone tool says what time it is, and the question asks yes or no, which the small model does not decide');
const TIME_NOW_ONLY = needsStronger('the time-zone tool read the time now, and the question asks about another time');

/**
 * What a time-zone tool read answers, as the tool returned it, every line (a conversion's source and
 * target both), not a line the model picks: a conversion, held to the one the request states
 * (time-zones.ts); the time now, only a question about now ("What time will it be in Singapore when the
 * call starts?" is not); neither, a question asked yes or no.
 */
function timeAnswer(action: RequestedAction, converted: boolean, read: StepResult): NumberedPart {
  if (asksYesOrNo(action)) return { action: action.n, status: 'unresolved', reason: TIME_NOT_YES_OR_NO };
  if (!converted && !asksTimeNow(action.clause)) return { action: action.n, status: 'unresolved', reason: TIME_NOW_ONLY };
  return { action: action.n, status: 'performed', result: resultLines([read]).join('; ') };
}

/** What the adapter carries between its turns. */
interface AdapterState {
  phase: 'reads' | 'effects';
  actions: RequestedAction[];
  plan: Plan;
  parts: NumberedPart[];
  /** Actions that ask for a change: the catalog offered them an external tool. An answer never performs one. */
  changes?: number[];
}

const STATE_KEY = 'embedded_adapter';

export interface EmbeddedTurnInput extends CallContext {
  input: string;
  memory?: boolean;
  serverTools: ServerToolCatalog;
  transcript: ChatMessage[];
}

/** What the adapter narrowed before the model chose, per action (the first turn's; the run's plan records it). */
type Ranked = { hints?: PlanHint[] };

export type EmbeddedTurnOutcome =
  | ({ kind: 'report'; content: string } & Ranked)
  | ({ kind: 'tool_calls'; assistant: ChatMessage; calls: ProposedCall[] } & Ranked)
  | { kind: 'stopped'; stop: LoopStop };

/** The adapter's state, from the last assistant message it wrote; null before its first turn. */
function stateOf(transcript: ChatMessage[]): AdapterState | null {
  for (let i = transcript.length - 1; i >= 0; i--) {
    const m = transcript[i]!;
    if (m.role !== 'assistant') continue;
    try {
      const state = (JSON.parse(m.content ?? '') as Record<string, unknown>)[STATE_KEY];
      if (state) return state as AdapterState;
    } catch {}
  }
  return null;
}

/** Each call's result as the transcript shows it, by call id. */
function shownResults(transcript: ChatMessage[]): Map<string, ShownResult> {
  const shown = new Map<string, ShownResult>();
  for (const m of transcript) {
    if (m.role !== 'tool' || !m.tool_call_id) continue;
    try {
      shown.set(m.tool_call_id, JSON.parse(m.content) as ShownResult);
    } catch {}
  }
  return shown;
}

/**
 * The steps' calls, each with its protocol arguments; a step whose arguments cannot be written (or do
 * not fit the tool's schema) leaves the plan, a gap saying why, so its action is unresolved.
 */
function callsFor(plan: Plan, steps: PlanStep[], input: string, actions: RequestedAction[], serverTools: ServerToolCatalog) {
  const gaps = [...(plan.gaps ?? [])];
  const called: { step: PlanStep; args: Record<string, unknown> }[] = [];
  for (const step of steps) {
    const args = protocolArguments(step, input, actions);
    // A delivery of a figure to work out ("Tell accounting the total of …: 45.90, …") would send the inputs, not the
    // figure. Its instruction is the clause before the message it gives (or the whole clause, when that is all it is),
    // and a message's own words before a colon ("know our total hours: Ana 12, …").
    const sendsFigure =
      step.tool === 'webhook_delivery' &&
      actions.some((a) => (step.covers ?? []).includes(a.n) && a.message !== undefined && asksFigure({ ...a, clause: instructionOf(a) }));
    const problem = sendsFigure
      ? FIGURE_REASON
      : typeof args === 'string'
        ? args
        : (protocolArgumentProblems(step.tool, args, serverTools) ??
          (step.effect === 'external' && copiesInstruction(args, actions, step)
            ? needsStronger('the small model wrote the instruction itself where the text to write belongs')
            : null));
    if (problem === null && typeof args !== 'string') called.push({ step, args: callArguments(step.tool, args, serverTools) });
    else for (const n of step.covers ?? []) gaps.push({ action: n, reason: `${step.tool}: ${problem}; nothing was run for it` });
  }
  const kept = new Set(called.map((c) => c.step.id));
  const dropped = new Set(steps.filter((s) => !kept.has(s.id)).map((s) => s.id));
  return { plan: { ...plan, steps: plan.steps.filter((s) => !dropped.has(s.id)), gaps }, called };
}

const FOUND_NOTHING = needsStronger(
  'find_contact_details found no email address, web address or phone number in the text, so it answers nothing; if the request asks something else',
);

/** A delivery's instruction: its clause before the message, and the message's own words before a colon. */
function instructionOf(a: RequestedAction): string {
  const introduced = /:\s/.exec(a.message ?? '');
  return [messageSpan(a.clause)?.head ?? a.clause, introduced ? a.message!.slice(0, introduced.index) : ''].join(' ');
}

/** A turn that calls `called`, carrying `state`. */
function callTurn(state: AdapterState, called: { step: PlanStep; args: Record<string, unknown> }[]): EmbeddedTurnOutcome {
  const assistant: ChatMessage = {
    role: 'assistant',
    content: JSON.stringify({ [STATE_KEY]: state }),
    tool_calls: called.map((c) => wireCall(c.step, c.args)),
  };
  return { kind: 'tool_calls', assistant, calls: called.map((c) => proposedCall(c.step, c.args)) };
}

/** The reads' results as the answer writer reads them: the shown results of the plan's read steps, by step. */
function readResults(plan: Plan, shown: ReadonlyMap<string, ShownResult>): StepResult[] {
  return plan.steps.flatMap((s) => {
    const r = shown.get(callIdOf(s));
    if (s.effect === 'external' || !r) return [];
    return [{ step_id: s.id, tool: s.tool, status: r.status as StepResult['status'], detail: r.detail, output: r.output ?? null, sources: [] }];
  });
}

/** The answer an exact count or search gave, as the adapter words it: the model does not restate it. */
function exactAnswer(step: PlanStep | undefined, r: StepResult | undefined): string | null {
  if (!step || r?.status !== 'done') return null;
  const out = r.output as { count?: number; items?: string[]; emails?: string[]; urls?: string[]; phones?: string[] } | null;
  if (step.tool === 'count_list_items' && typeof out?.count === 'number')
    return `${out.count} item${out.count === 1 ? '' : 's'}: ${(out.items ?? []).join(', ')}.`;
  if (step.tool === 'calculate' && typeof (r.output as { value?: unknown } | null)?.value === 'string') {
    const { value, expression } = r.output as { value: string; expression?: string };
    const shown = expression ?? step.scope;
    // A share times 100 is a percentage.
    const unit = /\*\s*100$/.test(shown) ? '%' : '';
    return `${value}${unit} (${shown}, worked out exactly by calculate).`;
  }
  if (step.tool === 'find_contact_details' && out) {
    const listed = (label: string, xs: string[] = []) => (xs.length ? [`${label}: ${xs.join(', ')}.`] : []);
    const lines = [...listed('Email addresses', out.emails), ...listed('Web addresses', out.urls), ...listed('Phone numbers', out.phones)];
    return lines.length ? lines.join(' ') : null;
  }
  return null;
}

/**
 * The plan with a `calculate` step for each answered action that asks for a figure, where the model
 * chose the calculation clearly enough (figure.ts); such an action is then answered by that step.
 */
async function withCalculations(
  deps: AgentDeps,
  t: EmbeddedTurnInput,
  plan: Plan,
  actions: RequestedAction[],
): Promise<Plan | { kind: 'stopped'; stop: LoopStop }> {
  // A read that takes nothing from the request (the allowed folders) answers no figure of its numbers.
  // The operator's fixed arguments (the repository's path) are nothing the request gave.
  const takesSomething = (s: PlanStep) => isToolId(s.tool) || Object.keys(givenArguments(s.tool, s.arguments ?? {}, t.serverTools) as object).length > 0;
  const covered = new Set(plan.steps.filter(takesSomething).flatMap((s) => s.covers ?? []));
  const readOnlyNothing = plan.steps.filter((s) => s.effect !== 'external' && !takesSomething(s)).flatMap((s) => s.covers ?? []);
  const steps: PlanStep[] = [];
  for (const n of new Set([...(plan.answer ?? []), ...readOnlyNothing])) {
    const action = actions[n - 1];
    if (!action || covered.has(n)) continue;
    const written = writtenExpression(action.clause);
    // A time is read from a time tool, never worked out by calculate ("which flight lands first, and at what time?").
    if (!written && (!asksFigure(action) || /\bwhat time\b/i.test(action.clause))) continue;
    const chosen = written
      ? ({ kind: 'chosen', calculation: { words: written, expression: written } } as const)
      : await chooseCalculation(deps, t, t.input, action);
    if (chosen.kind === 'stopped') return chosen;
    if (chosen.kind !== 'chosen') continue;
    const { words, expression } = chosen.calculation;
    steps.push({
      id: `calc_${n}`,
      tool: 'calculate',
      effect: 'read',
      purpose: `work out ${words}: action ${n}`,
      scope: expression,
      covers: [n],
      arguments: { expression },
    });
  }
  return steps.length ? { ...plan, steps: [...steps, ...plan.steps] } : plan;
}

/** An action of work on text whose words ask for a change ("Remember that …"): no answer performs it. */
const asksChange = (a: RequestedAction) => a.kind === 'analysis' && !asksOnlyInformation(a) && !asksAlphabeticalOrder(a);

/** Actions that ask for a change: the catalog offers them an external tool, or their words ask for one. */
const changesOf = (actions: RequestedAction[], serverTools: ServerToolCatalog) =>
  actionOptions(actions, serverTools, true)
    .filter((o) => o.options.some((x) => serverTools[x]?.effect === 'external') || asksChange(actions[o.action - 1]!))
    .map((o) => o.action);

export function embeddedTurns(deps: AgentDeps) {
  /** The answers to the actions the plan answers or read for (a failed read leaves its action unanswered). */
  async function answers(t: EmbeddedTurnInput, state: AdapterState, results: StepResult[]): Promise<NumberedPart[] | LoopStop> {
    const { plan, actions } = state;
    const stepOf = new Map(plan.steps.map((s) => [s.id, s]));
    const readBy = new Map(
      results.filter((r) => r.status === 'done').flatMap((r) => (stepOf.get(r.step_id)?.covers ?? []).map((n) => [n, r.step_id] as const)),
    );
    const answered = [...new Set([...(plan.answer ?? []), ...readBy.keys()])].sort((a, b) => a - b);
    const parts: NumberedPart[] = [];
    for (const action of answered) {
      // A figure worked out by calculate is its answer, whatever else read for the action.
      const calculated = results.find(
        (r) => r.status === 'done' && stepOf.get(r.step_id)?.tool === 'calculate' && stepOf.get(r.step_id)?.covers?.includes(action),
      );
      const by = calculated?.step_id ?? readBy.get(action);
      const sorted = alphabeticalAnswer(t.input, actions[action - 1]!);
      if (sorted !== null) {
        parts.push({ action, status: 'performed', result: sorted });
        continue;
      }
      const exact = exactAnswer(
        by ? stepOf.get(by) : undefined,
        results.find((r) => r.step_id === by),
      );
      if (exact !== null) {
        parts.push({ action, status: 'performed', result: exact });
        continue;
      }
      // An exact search that found nothing it looks for does not answer what was asked: the small model may have chosen it for another question.
      if (by && stepOf.get(by)?.tool === 'find_contact_details') {
        parts.push({ action, status: 'unresolved', reason: FOUND_NOTHING });
        continue;
      }
      // A time a time-zone tool read (it took a time zone) is found in its result, not worked out.
      const zoneKeys = Object.keys(stepOf.get(by ?? '')?.arguments ?? {}).filter(isTimeZoneKey);
      const timeRead = zoneKeys.length ? results.find((r) => r.step_id === by && r.status === 'done') : undefined;
      if (timeRead) {
        parts.push(timeAnswer(actions[action - 1]!, zoneKeys.length > 1, timeRead));
        continue;
      }
      // A figure to work out is not the small model's to guess: unresolved, saying what would do it.
      if (asksFigure(actions[action - 1]!)) {
        parts.push({ action, status: 'unresolved', reason: FIGURE_REASON });
        continue;
      }
      // A read that took no arguments (the whole graph, the allowed folders) returned the same whatever was asked.
      const step = by === undefined ? undefined : stepOf.get(by);
      const given = step ? (givenArguments(step.tool, step.arguments ?? {}, t.serverTools) as object) : {};
      const readTakesNothing = by !== undefined && Object.keys(given).length === 0;
      const outcome = await answerPart(deps, { ...t, action, results, actions, ...(by ? { readBy: by, readTakesNothing } : {}) });
      if (outcome.kind === 'stopped') return outcome.stop;
      parts.push(outcome.part);
    }
    return parts;
  }

  /** The turn after the reads: the answers, then the external calls that carry them (or the report when there are none). */
  async function effectsTurn(t: EmbeddedTurnInput, state: AdapterState, shown: Map<string, ShownResult>): Promise<EmbeddedTurnOutcome> {
    const parts = await answers(t, state, readResults(state.plan, shown));
    if (!Array.isArray(parts)) return { kind: 'stopped', stop: parts };
    const answered = withAnsweredMessages(state.plan, parts);
    const external = answered.steps.filter((s) => s.effect === 'external');
    const { plan, called } = callsFor(answered, external, t.input, state.actions, t.serverTools);
    const next: AdapterState = { ...state, phase: 'effects', plan, parts };
    if (called.length) return callTurn(next, called);
    return reportOf(t, next, shown);
  }

  const reportOf = (t: EmbeddedTurnInput, state: AdapterState, shown: Map<string, ShownResult>): EmbeddedTurnOutcome => ({
    kind: 'report',
    content: JSON.stringify(planReport(t.input, state.plan, state.actions, state.parts, shown, callIdOf, new Set(state.changes ?? []))),
  });

  return {
    async embeddedToolTurn(t: EmbeddedTurnInput): Promise<EmbeddedTurnOutcome> {
      const state = stateOf(t.transcript);
      const shown = shownResults(await withRecalledText(deps.db, t.tenantId, t.transcript));
      if (state?.phase === 'effects') return reportOf(t, state, shown);
      if (state?.phase === 'reads') return await effectsTurn(t, state, shown);
      // Statements that are context for the part after them are not parts of their own (context-statements.ts).
      const read = requestedActions(t.input, { memory: t.memory ?? false });
      const actions = withoutContextStatements(read, new Set(changesOf(read, t.serverTools)));
      const proposal = await planByChoice(deps, { ...t, attempt: 1 }, actions, t.serverTools);
      if (proposal.kind === 'stopped') return proposal;
      if (proposal.kind === 'invalid') {
        const reason = `the embedded model's plan was invalid: ${proposal.problems.slice(0, 3).join(' ')}`;
        const gaps = actions.map((a) => ({ action: a.n, reason }));
        return reportOf(t, { phase: 'effects', actions, plan: { planner: 'model', steps: [], gaps }, parts: [] }, shown);
      }
      const figured = await withCalculations(deps, t, proposal.plan, actions);
      if ('kind' in figured) return figured;
      const planned = withDeliveryMessages(figured, actions);
      const reads = planned.steps.filter((s) => s.effect !== 'external');
      const { plan, called } = callsFor(planned, reads, t.input, actions, t.serverTools);
      const changes = changesOf(actions, t.serverTools);
      const state0: AdapterState = { phase: 'reads', actions, plan, parts: [], changes };
      const first = called.length ? callTurn(state0, called) : await effectsTurn(t, state0, shown);
      return first.kind === 'stopped' ? first : { ...first, ...(planned.hints ? { hints: planned.hints } : {}) };
    },
  };
}
