// The scripted capable model of the tool-calling eval (scripts/eval/scripted/cases.json): an
// OpenAI-wire upstream that plays, for each case, the calls and the report a capable model makes.
// It finds the case by the request (the first user message) and its turn by the assistant messages
// so far, so a retried call gets the same reply. It reads what the service offers on the wire and
// never calls a tool it was not offered: it says so instead, and the case fails.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { fakeUpstream } from './fake-servers.ts';

export interface ScriptedCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}
export type ScriptTurn = { calls: ScriptedCall[] } | { report: { parts: unknown[] } };

export interface ScriptedCase {
  id: string;
  catalog: 'readme' | 'servers';
  quick?: boolean;
  memory?: boolean;
  input: string;
  seed?: { files?: Record<string, string>; repo_files?: Record<string, string>; memory?: { name: string; entityType: string; observations: string[] }[] };
  script: ScriptTurn[];
  decisions?: ('approve' | { reject: string })[];
  expect: {
    status: 'completed' | 'needs_attention';
    rounds?: number;
    deliveries?: { to: string; message: string }[];
    files?: Record<string, string>;
    absent?: string[];
    answers?: string[];
    performed?: string[];
  };
}

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));

export function scriptedCases(): ScriptedCase[] {
  return JSON.parse(readFileSync(here('../../scripts/eval/scripted/cases.json'), 'utf8')) as ScriptedCase[];
}

export function scriptedCatalogs(): Record<'readme' | 'servers', { servers: unknown[] }> {
  return JSON.parse(readFileSync(here('../../scripts/eval/scripted/catalogs.json'), 'utf8'));
}

/** Replaces the placeholders of a case or a catalog ($DIR, $REPO, …) in every string of `value`. */
export function substituted<T>(value: T, places: object): T {
  const named = places as Record<string, string | undefined>;
  const text = JSON.stringify(value).replace(/\$(DIR|REPO|MEMORY_FILE|NODE_MODULES|PY_BIN)\b/g, (m, name: string) =>
    JSON.stringify(named[name] ?? m).slice(1, -1),
  );
  return JSON.parse(text) as T;
}

/** The scripted model; `cases` are already substituted. What it offered a case's model is in `offered`. */
export async function scriptedModel(cases: () => ScriptedCase[]) {
  const problems: string[] = [];
  const upstream = await fakeUpstream((body, _req, res) => {
    const reply = (message: object, finish: string) => {
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          id: 'scripted',
          object: 'chat.completion',
          choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish }],
          usage: { prompt_tokens: 200, completion_tokens: 40, total_tokens: 240 },
        }),
      );
    };
    const input = body.messages.find((m: { role: string }) => m.role === 'user')?.content;
    const found = cases().find((c) => c.input === input);
    const turn = body.messages.filter((m: { role: string }) => m.role === 'assistant').length;
    const step = found?.script[turn];
    if (!found || !step) {
      problems.push(`${found?.id ?? 'unknown case'}: no scripted turn ${turn + 1}`);
      return reply({ content: 'SCRIPT ERROR: no such turn' }, 'stop');
    }
    if ('report' in step) return reply({ content: JSON.stringify(step.report) }, 'stop');
    const offered = new Set((body.tools ?? []).map((t: { function: { name: string } }) => t.function.name));
    const missing = step.calls.filter((c) => !offered.has(c.name));
    if (missing.length) {
      problems.push(`${found.id}: not offered ${missing.map((c) => c.name).join(', ')}`);
      return reply({ content: `SCRIPT ERROR: ${missing.map((c) => c.name).join(', ')} not offered` }, 'stop');
    }
    const tool_calls = step.calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments) } }));
    reply({ content: null, tool_calls }, 'tool_calls');
  });
  return { ...upstream, problems };
}
