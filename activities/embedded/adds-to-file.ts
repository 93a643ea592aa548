// An instruction to add to what a file holds ("add coffee beans to the end of shopping.txt"), met with a
// tool that writes a file's whole text (the filesystem server's write_file), would replace what the file
// held with the one line: the small model cannot carry the old text over, so the embedded adapter does
// not propose it. English words, so they live in the embedded adapter only.
import { takesPath } from '../../domain/agent/request-spans.ts';

/** An instruction to add to the end of a file ("add coffee beans to the end of shopping.txt", "Append this line …"); English, so this adapter's. */
export const addsToFile = (clause: string) =>
  /\b(?:append|(?:to|at) the (?:end|bottom) of|under the others|one more (?:line|row)|another (?:line|row)|add (?:this|a|one|the) (?:new )?(?:row|line))\b/i.test(
    clause,
  ) ||
  // "Add this to shopping.txt", "Log this in deliveries.txt", "Insert this line into staff.csv": not a new file.
  (/\b(?:add|append|log|insert)\b[^.?!]*\b(?:to|in|into)\s+\S*\.\w{1,5}\b/i.test(clause) && !/\bnew file\b|\bcreate\b/i.test(clause));

/** A tool that writes a file's whole text: it requires a path and a text to write, and takes nothing to find in the file. */
export function writesWholeText(schema: unknown): boolean {
  const s = schema as { properties?: Record<string, unknown>; required?: string[] } | undefined;
  const required = s?.required ?? [];
  return (
    takesPath(schema) && required.some((k) => /^(?:content|text|body)$/i.test(k)) && !Object.keys(s?.properties ?? {}).some((k) => /^(?:old|edits?$)/i.test(k))
  );
}
