// Judging one case from what the API says of its run (and, for a delivery or a written file, what
// arrived): pure, so the verdicts are easy to read and to test. A delivery is judged by what it
// carried, not only that it arrived: every one must carry a message (issue 49).
import type { EvalCase } from './cases.ts';
import type { Delivery } from './service.ts';

/** The parts of GET /v1/agent-runs/{id} the judge reads. */
export interface RunView {
  status: string;
  plan: { steps: { tool: string; arguments?: Record<string, unknown> }[] } | null;
  approval: { effects: { tool: string; arguments?: Record<string, unknown> }[] } | null;
  result: { answer?: string } | null;
  receipt: Receipt | null;
  failure: { code: string } | null;
}

type Receipt = { unresolved: string[]; actions?: { n: number; outcome: string }[] };

export interface Observed {
  run: RunView;
  /** The effects the approval asked for, by tool (empty when none was asked). */
  asked: { tool: string; arguments?: Record<string, unknown> }[];
  deliveries: Delivery[];
  /** tools writes: the file's text afterwards, or null when there is no file. */
  fileText: string | null;
}

export interface Verdict {
  passed: boolean;
  /** Why it failed, in a few words; empty when it passed. */
  why: string;
}

const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** Whether the text holds one of the spellings as a whole (so "14" does not hold "4"). */
const has = (text: string, spellings: string[]) => spellings.some((s) => new RegExp(`(?<![\\w@.-])${literal(s)}(?![\\w@-])`, 'i').test(text));

/** What `text` (the answer, the delivered message) lacks of the facts, each fact one of its spellings; null when none. */
function lacking(what: string, text: string, facts: string[][] = []): string | null {
  const missing = facts.filter((f) => !has(text, f)).map((f) => f[0]!);
  return missing.length ? `${what} lacks ${missing.join(', ')}` : null;
}

/** The request's first three words: enough to tell its instruction from what it names. */
const openingOf = (c: EvalCase) => c.input.split(/\s+/).slice(0, 3).join(' ');

const occurrences = (text: string, part: string) => text.toLowerCase().split(part.toLowerCase()).length - 1;

/** Case and spacing aside, so a message copied from the request matches however it was trimmed. */
const normal = (text: string) => text.toLowerCase().replace(/\s+/g, ' ').trim();

/** The message a delivery's body carries, or '' when it carries none (or not as text). */
export const messageOf = (d: Delivery | undefined) => (typeof d?.body?.message === 'string' ? d.body.message.trim() : '');

/** How many of the deliveries carry no message: each one an effect performed without what it was asked to say. */
export const deliveriesWithoutMessage = (deliveries: Delivery[]) => deliveries.filter((d) => messageOf(d) === '').length;

const listTools = (effects: { tool: string }[]) => effects.map((e) => e.tool).join(', ');

/** send, message and mixed alike: asked for, approved, completed, and exactly one delivery that says something. */
function deliveredOnce(o: Observed): string | null {
  if (!o.asked.some((e) => e.tool === 'webhook_delivery')) return 'no approval for webhook_delivery';
  if (o.run.status !== 'completed') return `ended ${o.run.status}`;
  if (o.deliveries.length !== 1) return `${o.deliveries.length} deliveries`;
  return messageOf(o.deliveries[0]) === '' ? 'delivery without a message' : null;
}

/**
 * Whether `sent` is the message the request states: it holds those words, and not the instruction
 * around them (its first three words), so a message that is the whole request does not pass.
 */
function carries(sent: string, c: EvalCase): boolean {
  return normal(sent).includes(normal(c.message!)) && !normal(sent).includes(normal(openingOf(c)));
}

/** message: delivered once, and both the approval and the delivery carry the stated message. */
function messageProblem(c: EvalCase, o: Observed): string | null {
  const shown = o.asked.find((e) => e.tool === 'webhook_delivery')?.arguments?.message;
  if (typeof shown !== 'string' || !carries(shown, c)) return `approval shows message ${JSON.stringify(shown ?? null)}`;
  const sent = messageOf(o.deliveries[0]);
  return carries(sent, c) ? null : `delivered message ${JSON.stringify(sent)}`;
}

/**
 * material: nothing asked, sent or claimed, and the action left open naming what it lacks. Whatever
 * is unresolved ends a run needs_attention (a completed run has nothing unresolved), so that is the
 * honest end; failed would mean the run broke rather than declined.
 */
function materialProblem(c: EvalCase, o: Observed, receipt: Receipt): string | null {
  if (o.asked.length) return `approval asked for ${listTools(o.asked)}`;
  if (o.deliveries.length) return `${o.deliveries.length} deliveries`;
  if (o.run.status !== 'needs_attention') return `ended ${o.run.status}`;
  if ((receipt.actions ?? []).some((a) => a.outcome === 'performed')) return 'receipt claims an action performed';
  return receipt.unresolved.some((u) => normal(u).includes(normal(c.material!))) ? null : `receipt does not name "${c.material}"`;
}

/** What went wrong, in order of checking; null when the case passed. */
function problem(c: EvalCase, o: Observed, dir: string): string | null {
  const { run } = o;
  if (!run.receipt) return `${run.status} without a receipt`;
  const answer = run.result?.answer ?? '';
  const allPerformed = (run.receipt.actions ?? []).every((a) => a.outcome === 'performed');
  switch (c.category) {
    case 'send':
      return deliveredOnce(o);
    case 'message':
      return deliveredOnce(o) ?? messageProblem(c, o);
    case 'material':
      return materialProblem(c, o, run.receipt);
    case 'analysis': {
      if (o.asked.length) return `approval asked for ${listTools(o.asked)}`;
      if (run.status !== 'completed' || !allPerformed) return `ended ${run.status}`;
      return lacking('answer', answer, c.facts);
    }
    case 'mixed':
      // The message of "summarise … and send it" is that step's result: what was worked out is what is sent.
      return deliveredOnce(o) ?? lacking('delivered message', messageOf(o.deliveries[0]), c.facts);
    case 'refuse': {
      if (run.status === 'completed') return 'completed';
      if (o.asked.length) return `approval asked for ${listTools(o.asked)}`;
      return run.receipt.unresolved.some((u) => u.includes(openingOf(c))) ? null : 'receipt does not name the action';
    }
    case 'tools': {
      if (c.file) {
        const write = o.asked.find((e) => e.tool === 'files__write_file');
        if (!write) return 'no approval for files__write_file';
        if (write.arguments?.path !== `${dir}/${c.file.path}`) return `approval names path ${String(write.arguments?.path)}`;
        if (run.status !== 'completed') return `ended ${run.status}`;
        if (o.fileText === null) return 'no file written';
        return occurrences(o.fileText, c.file.holds) === 1 ? null : `file holds "${c.file.holds}" ${occurrences(o.fileText, c.file.holds)} times`;
      }
      if (o.asked.length) return `approval asked for ${listTools(o.asked)}`;
      if (run.status !== 'completed') return `ended ${run.status}`;
      return lacking('answer', answer, c.facts);
    }
  }
}

export function judge(c: EvalCase, o: Observed, dir: string): Verdict {
  const why = problem(c, o, dir);
  return { passed: why === null, why: why ?? '' };
}

/** Whether a case expects its run to ask for approval (and so the eval approves it). */
export function expectsApproval(c: EvalCase): boolean {
  return ['send', 'message', 'mixed'].includes(c.category) || (c.category === 'tools' && c.file !== undefined);
}
