// Judging one case from what the API says of its run (and, for a delivery or a written file, what
// arrived): pure, so the verdicts are easy to read and to test.
import type { EvalCase } from './cases.ts';
import type { Delivery } from './service.ts';

/** The parts of GET /v1/agent-runs/{id} the judge reads. */
export interface RunView {
  status: string;
  plan: { steps: { tool: string; arguments?: Record<string, unknown> }[] } | null;
  approval: { effects: { tool: string; arguments?: Record<string, unknown> }[] } | null;
  result: { answer?: string } | null;
  receipt: { unresolved: string[]; actions?: { n: number; outcome: string }[] } | null;
  failure: { code: string } | null;
}

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

/** The facts the text lacks (each fact is one of its spellings). */
function missingFacts(text: string, facts: string[][] = []): string[] {
  return facts.filter((f) => !has(text, f)).map((f) => f[0]!);
}

const occurrences = (text: string, part: string) => text.toLowerCase().split(part.toLowerCase()).length - 1;

/** What went wrong, in order of checking; null when the case passed. */
function problem(c: EvalCase, o: Observed, dir: string): string | null {
  const { run } = o;
  if (!run.receipt) return `${run.status} without a receipt`;
  const asks = (tool: string) => o.asked.some((e) => e.tool === tool);
  const answer = run.result?.answer ?? '';
  const allPerformed = (run.receipt.actions ?? []).every((a) => a.outcome === 'performed');
  switch (c.category) {
    case 'send':
      if (!asks('webhook_delivery')) return 'no approval for webhook_delivery';
      if (run.status !== 'completed') return `ended ${run.status}`;
      return o.deliveries.length === 1 ? null : `${o.deliveries.length} deliveries`;
    case 'analysis': {
      if (o.asked.length) return `approval asked for ${o.asked.map((e) => e.tool).join(', ')}`;
      if (run.status !== 'completed' || !allPerformed) return `ended ${run.status}`;
      const missing = missingFacts(answer, c.facts);
      return missing.length ? `answer lacks ${missing.join(', ')}` : null;
    }
    case 'mixed': {
      if (!asks('webhook_delivery')) return 'no approval for webhook_delivery';
      if (run.status !== 'completed') return `ended ${run.status}`;
      if (o.deliveries.length !== 1) return `${o.deliveries.length} deliveries`;
      const missing = missingFacts(JSON.stringify(o.deliveries[0]!.body?.answers ?? ''), c.facts);
      return missing.length ? `delivery lacks ${missing.join(', ')}` : null;
    }
    case 'refuse': {
      if (run.status === 'completed') return 'completed';
      if (o.asked.length) return `approval asked for ${o.asked.map((e) => e.tool).join(', ')}`;
      const opening = c.input.split(/\s+/).slice(0, 3).join(' ');
      return run.receipt.unresolved.some((u) => u.includes(opening)) ? null : 'receipt does not name the action';
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
      if (o.asked.length) return `approval asked for ${o.asked.map((e) => e.tool).join(', ')}`;
      if (run.status !== 'completed') return `ended ${run.status}`;
      const missing = missingFacts(answer, c.facts);
      return missing.length ? `answer lacks ${missing.join(', ')}` : null;
    }
  }
}

export function judge(c: EvalCase, o: Observed, dir: string): Verdict {
  const why = problem(c, o, dir);
  return { passed: why === null, why: why ?? '' };
}

/** Whether a case expects its run to ask for approval (and so the eval approves it). */
export function expectsApproval(c: EvalCase): boolean {
  return c.category === 'send' || c.category === 'mixed' || (c.category === 'tools' && c.file !== undefined);
}
