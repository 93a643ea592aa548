// Outputs of the deterministic tools, as pure functions: the tool activity
// produces them and verification derives them again to check the recorded output.
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
