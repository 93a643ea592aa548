// Outputs of the tool-calling protocol's exact built-ins (domain/agent/protocol-tools.ts), as pure
// functions of a call's arguments and the run's evidence: the tool activity produces them, and
// verification derives them again from the same arguments to check the recorded output. What may
// stand as evidence is structural: the request, and the strings of earlier tool results.
import { calculate } from '../agent/calculate.ts';
import { walkJson } from '../json-walk.ts';
import { contactDetailsIn } from '../text/find-in-text.ts';
import { textAnalysisOutput } from './tool-outputs.ts';
import type { StepResult } from './run-types.ts';

/** The texts a call may draw on: the request, and every string in the outputs of the calls done before it. */
export function evidenceOf(input: string, previous: readonly StepResult[]): string[] {
  const strings = previous
    .filter((r) => r.status === 'done')
    .flatMap((r) => [...walkJson(r.output)].flatMap((n) => (typeof n.value === 'string' ? [n.value] : typeof n.value === 'number' ? [String(n.value)] : [])));
  return [input, ...strings];
}

export type ExactOutcome = { ok: true; output: Record<string, unknown>; detail: string } | { ok: false; problem: string };

const standsIn = (text: string, evidence: readonly string[]) => evidence.some((e) => e.includes(text));

/** The exact output of a protocol built-in that computes (calculate, count_list_items, find_contact_details, text_analysis); null for any other tool. */
export function exactOutput(tool: string, args: Record<string, unknown>, evidence: readonly string[]): ExactOutcome | null {
  switch (tool) {
    case 'calculate': {
      const expression = String(args.expression ?? '');
      const c = calculate(expression, [...evidence]);
      if (!c.ok) return { ok: false, problem: `calculate refused: ${c.problem}.` };
      return { ok: true, output: { expression: c.expression, value: c.value }, detail: `Calculated ${c.value}.` };
    }
    case 'count_list_items': {
      const items = Array.isArray(args.items) ? args.items.map(String) : [];
      const unstated = items.filter((i) => !standsIn(i, evidence));
      if (unstated.length)
        return { ok: false, problem: `count_list_items refused: ${unstated.length} item(s) stand in neither the request nor an earlier tool result.` };
      return { ok: true, output: { count: items.length, items }, detail: `Counted ${items.length} item(s).` };
    }
    case 'find_contact_details': {
      const text = String(args.text ?? '');
      if (!standsIn(text, evidence))
        return { ok: false, problem: 'find_contact_details refused: the text stands in neither the request nor an earlier tool result.' };
      const found = contactDetailsIn(text);
      return { ok: true, output: { ...found }, detail: `Found ${found.emails.length + found.urls.length + found.phones.length} address(es) and number(s).` };
    }
    case 'text_analysis': {
      const output = textAnalysisOutput(String(args.text ?? ''));
      return { ok: true, output, detail: `Analysed ${output.sentences} sentence(s).` };
    }
    default:
      return null;
  }
}
