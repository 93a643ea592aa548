// Judging one case of the fresh eval (scripts/eval/fresh/cases.json, written by a helper session that
// never read the planner) from what the API says of its run and what arrived: pure, so the verdicts
// are easy to read and to test. Three counts matter (issue 63): successes; false successes, a run that
// ended `completed` with a wrong or missing result; and nonsense proposals, an approval asked for a
// request that asked for no effect.

export interface FreshCase {
  id: string;
  half: 'tuning' | 'held_out';
  catalog: string;
  memory?: boolean;
  input: string;
  seed?: { files?: Record<string, string>; repo_files?: Record<string, string>; memory?: Record<string, unknown>[] };
  /** information: an answer; effect: a change a tool of the catalog can make; impossible: one none can; missing: material never given. */
  asks: 'information' | 'effect' | 'impossible' | 'missing';
  expect: {
    status: string;
    approval: boolean;
    rounds?: number;
    deliveries?: { to?: string }[];
    performed?: string[];
    /** Each fact: one of its spellings stands in the answer (case aside). */
    answer_facts?: string[][];
    delivery_facts?: string[][];
    files?: Record<string, string>;
    absent?: string[];
    directories?: string[];
    commits?: { message: string; files: string[] }[];
    memory_facts?: string[][];
  };
}

/** What a run came to, as the runner observed it. */
export interface FreshObserved {
  status: string;
  /** Approval rounds the run asked for. */
  rounds: number;
  /** The answers its report gives (every part's), joined. */
  answers: string;
  deliveries: { to?: unknown; message?: unknown }[];
  /** Tools of the external effects performed (receipt.action_boundary.effects_performed, without step ids). */
  performed: string[];
  file(name: string): string | null;
  isDirectory(name: string): boolean;
  /** Commits made since the case began: message and files. */
  commits: { message: string; files: string[] }[];
  /** The memory graph's text after the run. */
  memoryText: string;
}

export type FreshVerdict = {
  outcome: 'success' | 'false_success' | 'not_done';
  /** An approval was asked for a request that asked for no effect. */
  nonsenseProposal: boolean;
  /** Why it is not a success; empty when it is. */
  why: string;
};

const norm = (s: string) => s.toLowerCase().replace(/\s+/g, ' ');
const holds = (text: string, fact: string[]) => fact.some((f) => norm(text).includes(norm(f)));
const lacking = (what: string, text: string, facts: string[][] = []) => {
  const missing = facts.filter((f) => !holds(text, f)).map((f) => f[0]);
  return missing.length ? `${what} lacks ${missing.join(', ')}` : null;
};
const str = (v: unknown) => (typeof v === 'string' ? v : '');

/** What the effects that arrived lack of what the case expects; null when they are all there. */
function effectProblem(e: FreshCase['expect'], o: FreshObserved): string | null {
  const expected = e.deliveries ?? [];
  if (o.deliveries.length !== expected.length) return `${o.deliveries.length} deliveries, not ${expected.length}`;
  const messages = o.deliveries.map((d) => str(d.message)).join('\n');
  const delivered = lacking('the delivered message', messages, e.delivery_facts);
  if (delivered) return delivered;
  for (const [name, text] of Object.entries(e.files ?? {})) {
    const found = o.file(name);
    if (found === null) return `${name} was not written`;
    if (found.trim() !== text.trim()) return `${name} holds ${JSON.stringify(found.slice(0, 80))}`;
  }
  for (const name of e.absent ?? []) if (o.file(name) !== null) return `${name} is still there`;
  for (const name of e.directories ?? []) if (!o.isDirectory(name)) return `no folder ${name}`;
  for (const c of e.commits ?? []) {
    const made = o.commits.find((m) => norm(m.message).includes(norm(c.message)));
    if (!made) return `no commit "${c.message}"`;
    const files = [...made.files].sort().join(',');
    if (files !== [...c.files].sort().join(',')) return `the commit holds ${files}`;
  }
  if (e.commits === undefined && o.commits.length) return `${o.commits.length} commit(s) nobody asked for`;
  return lacking('the memory graph', o.memoryText, e.memory_facts);
}

export function judgeFresh(c: FreshCase, o: FreshObserved): FreshVerdict {
  const e = c.expect;
  const nonsenseProposal = c.asks !== 'effect' && o.rounds > 0;
  const problem = ((): string | null => {
    if (o.status !== e.status) return `ended ${o.status}, not ${e.status}`;
    if (!e.approval && o.rounds > 0) return 'asked for an approval nobody needed';
    if (e.approval && o.rounds === 0) return 'asked for no approval';
    if (c.asks === 'information') {
      if (o.deliveries.length || o.performed.length) return 'performed an effect for a question';
      return lacking('the answer', o.answers, e.answer_facts);
    }
    if (c.asks === 'effect') return effectProblem(e, o);
    // impossible, missing: nothing done.
    if (o.deliveries.length || o.performed.length || o.commits.length) return 'did something';
    return null;
  })();
  if (problem === null) return { outcome: 'success', nonsenseProposal, why: '' };
  return { outcome: o.status === 'completed' ? 'false_success' : 'not_done', nonsenseProposal, why: problem };
}
