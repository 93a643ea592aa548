// Outputs of the deterministic tools, as pure functions: the tool activity
// produces them and verification derives them again to check the recorded output.
import { digestOf } from '../digest.ts';
import { analyzeObjective } from '../text/analyze.ts';

export function textAnalysisOutput(scope: string) {
  const facts = analyzeObjective(scope);
  return {
    key_phrases: facts.keyTerms.map((k) => k.term),
    constraints: facts.constraints,
    quantities: facts.quantities,
    questions: facts.questions,
    sentences: facts.sentences.length,
  };
}

/**
 * What a run records of one recalled vault entry: a reference (id, version, digest
 * and length of the text), never the text itself, so forgetting the entry in the
 * vault leaves no copy of it in the run's output, result or workflow history. The
 * model of an upstream run reads the text from the vault when its turn is made.
 */
export interface MemoryReference {
  id: string;
  version: number;
  /** digestOf(content) of the text recalled. */
  digest: string;
  characters: number;
}

export function memoryRecallOutput(entries: { id: string; version: number; content: string }[]): { entries: MemoryReference[] } {
  return { entries: entries.map((e) => ({ id: e.id, version: e.version, digest: digestOf(e.content), characters: e.content.length })) };
}

/** Source coverage of one recalled entry; outputs recorded before references (with `content`) still count. */
export function memorySource(e: Partial<MemoryReference> & { id: string; content?: string }) {
  const content = e.content ?? '';
  return { source: `memory:${e.id}`, digest: e.digest ?? digestOf(content), characters: e.characters ?? content.length, units_total: 1, units_used: 1 };
}
