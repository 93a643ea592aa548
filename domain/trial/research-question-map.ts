// Recipe "research_question_map": a central question and, per key term of the
// objective, sub-questions of different kinds (definition, measurement, cause,
// relation), each grounded in the objective sentences that mention the term
// and paired with the kind of evidence that would answer it.
import { type ObjectiveFacts, capitalize, mentions, truncate } from '../text/analyze.ts';
import type { RecipeOutput } from './recipe.ts';

const MAX_THEMES = 4;

/** Imperative openings turned into a question form: "understand why X" becomes "Why X?". */
const OPENINGS: [RegExp, string][] = [
  [
    /^(?:understand|explain|find out|figure out|learn|determine|investigate|explore|research|study|assess|evaluate|analy[sz]e)\s+(why|how|what|whether|which|who|when|where)\s+/i,
    '$1 ',
  ],
  [/^(?:understand|investigate|explore|research|study|assess|evaluate|analy[sz]e|map|review)\s+(?:the\s+)?/i, 'What do we know about the '],
];

export interface ResearchQuestionMap {
  central_question: string;
  themes: {
    term: string;
    grounding: string[];
    questions: { kind: 'definition' | 'measurement' | 'cause' | 'relation'; question: string; evidence: string }[];
  }[];
  assumptions_to_test: string[];
  stated_questions: string[];
}

function centralQuestion(facts: ObjectiveFacts): string {
  if (facts.questions[0]) return truncate(facts.questions[0], 240);
  const first = (facts.sentences[0] ?? facts.text).replace(/[.!]$/, '');
  for (const [pattern, replacement] of OPENINGS) {
    if (pattern.test(first)) return `${truncate(capitalize(first.replace(pattern, replacement)), 238)}?`;
  }
  const terms = facts.keyTerms.slice(0, 3).map((k) => k.term);
  return `What is known, and what is still unknown, about ${terms.join(', ') || truncate(first, 120)}?`;
}

function themeQuestions(term: string, other: string | undefined): ResearchQuestionMap['themes'][number]['questions'] {
  const questions: ResearchQuestionMap['themes'][number]['questions'] = [
    { kind: 'definition', question: `What exactly counts as "${term}" in this context?`, evidence: 'Definitions from primary documents or domain owners' },
    { kind: 'measurement', question: `How is ${term} measured, and what is its current level?`, evidence: 'Quantitative data with its source and date' },
    { kind: 'cause', question: `What drives changes in ${term}?`, evidence: 'Studies, incident records or interviews linking causes to effects' },
  ];
  if (other) {
    questions.push({ kind: 'relation', question: `How does ${term} relate to ${other}?`, evidence: 'Comparative or longitudinal data covering both' });
  }
  return questions;
}

export function researchQuestionMap(facts: ObjectiveFacts): RecipeOutput<ResearchQuestionMap> {
  const terms = facts.keyTerms.slice(0, MAX_THEMES).map((k) => k.term);
  const themes = terms.map((term, i) => ({
    term,
    grounding: facts.sentences
      .filter((s) => mentions(s, term))
      .map((s) => truncate(s, 200))
      .slice(0, 3),
    questions: themeQuestions(term, terms[(i + 1) % terms.length] === term ? undefined : terms[(i + 1) % terms.length]),
  }));
  const assumptions = facts.sentences.filter((s) => /\b(assum\w*|believe|probably|likely|seems?|suspect|think|expect)\b/i.test(s));
  const result: ResearchQuestionMap = {
    central_question: centralQuestion(facts),
    themes,
    assumptions_to_test: assumptions.map((s) => truncate(s, 200)),
    stated_questions: facts.questions.map((q) => truncate(q, 200)),
  };
  const unresolved = [`${themes.reduce((n, t) => n + t.questions.length, 0)} sub-questions are unanswered: the trial maps questions and consults no sources`];
  if (terms.length < 2) unresolved.push('The objective has fewer than two key terms; add detail for a richer map');
  const used = facts.sentences.filter((s) => terms.some((t) => mentions(s, t)));
  return { result, unresolved, usedSentences: used };
}
