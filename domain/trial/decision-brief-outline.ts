// Recipe "decision_brief_outline": the options the objective names, criteria it
// states (or that its key terms suggest), an evidence matrix of what each
// comparison needs, and the questions still open. It never recommends: the
// trial gathers no evidence, so the recommendation stays unresolved.
import { type ObjectiveFacts, capitalize, truncate, wordsOf } from '../text/analyze.ts';
import type { RecipeOutput } from './recipe.ts';

/** Known decision criteria and the evidence question each one asks of an option. */
const CRITERIA: Record<string, { matches: RegExp; evidence: (option: string) => string }> = {
  cost: {
    matches: /\b(cost|costs|price|pricing|budget|cheap|expensive|spend|money|\$|€|£)/i,
    evidence: (o) => `Total cost of ${o} over the decision horizon, including switching costs`,
  },
  time: { matches: /\b(time|deadline|fast|quick|speed|weeks?|months?|days?|soon|delay)\b/i, evidence: (o) => `Time until ${o} delivers a usable result` },
  risk: { matches: /\b(risk|risky|safe|safety|failure|fail|uncertain|downside)\b/i, evidence: (o) => `Main failure modes of ${o} and how likely each is` },
  quality: {
    matches: /\b(quality|accuracy|accurate|reliable|reliability|performance)\b/i,
    evidence: (o) => `Measured quality or reliability of ${o} on a representative case`,
  },
  security: {
    matches: /\b(security|secure|privacy|private|compliance|gdpr|regulation|legal)\b/i,
    evidence: (o) => `Security, privacy and compliance obligations ${o} creates`,
  },
  effort: {
    matches: /\b(effort|maintenance|maintain|complexity|complex|simple|team|staff|skills?)\b/i,
    evidence: (o) => `People and ongoing effort ${o} requires`,
  },
  scale: { matches: /\b(scale|scaling|growth|grow|volume|capacity|users)\b/i, evidence: (o) => `How ${o} behaves at the expected volume and growth` },
};

export interface DecisionBriefOutline {
  decision_question: string;
  options: { id: string; label: string; source: 'stated' | 'baseline' }[];
  criteria: { id: string; source: 'stated' | 'key_term' }[];
  evidence_matrix: { option_id: string; criterion_id: string; evidence_needed: string }[];
  constraints: string[];
  risks_mentioned: string[];
  open_questions: string[];
  recommendation: { status: 'unresolved'; reason: string };
}

function decisionQuestion(facts: ObjectiveFacts, options: string[]): string {
  if (facts.questions[0]) return truncate(facts.questions[0], 240);
  if (options.length >= 2) return `Which is the better choice: ${options.map((o) => `"${o}"`).join(' or ')}?`;
  return `Should we ${truncate(facts.sentences[0]?.replace(/[.!]$/, '') ?? facts.text, 200).replace(/^(we|i)\s+(should|want to|need to|must)\s+/i, '')}?`;
}

function criteriaOf(facts: ObjectiveFacts, optionWords: Set<string>): DecisionBriefOutline['criteria'] {
  const stated = Object.entries(CRITERIA)
    .filter(([, c]) => c.matches.test(facts.text))
    .map(([id]) => ({ id, source: 'stated' as const }));
  const fromTerms = facts.keyTerms
    .map((k) => k.term)
    .filter((t) => !t.split(' ').some((w) => optionWords.has(w)) && !stated.some((s) => CRITERIA[s.id]!.matches.test(t)))
    .slice(0, Math.max(0, 5 - stated.length))
    .map((t) => ({ id: t, source: 'key_term' as const }));
  return [...stated, ...fromTerms].slice(0, 6);
}

export function decisionBriefOutline(facts: ObjectiveFacts): RecipeOutput<DecisionBriefOutline> {
  const stated = facts.options;
  const labels = stated.length >= 2 ? stated : [...stated, stated.length === 1 ? `Not ${stated[0]} (keep the current approach)` : 'Keep the current approach'];
  const options = labels.map((label, i) => ({
    id: `option_${i + 1}`,
    label: capitalize(label),
    source: i < stated.length ? ('stated' as const) : ('baseline' as const),
  }));
  const optionWords = new Set(stated.flatMap((o) => wordsOf(o)));
  const criteria = criteriaOf(facts, optionWords);
  const evidence_matrix = options.flatMap((o) =>
    criteria.map((c) => ({
      option_id: o.id,
      criterion_id: c.id,
      evidence_needed: CRITERIA[c.id]?.evidence(`"${o.label}"`) ?? `How "${o.label}" affects ${c.id}, with a source for the claim`,
    })),
  );
  const open_questions: string[] = [];
  if (!/\b(deadline|by|before|until|within|weeks?|months?|days?)\b/i.test(facts.text)) open_questions.push('By when must the decision be made?');
  if (!CRITERIA.cost!.matches.test(facts.text)) open_questions.push('What budget bounds the options?');
  if (criteria.every((c) => c.source === 'key_term')) open_questions.push('Which criteria matter most, and how are they weighted?');
  if (stated.length < 2) open_questions.push('Which alternatives were considered besides the one named?');
  open_questions.push('Who decides, and who must be consulted?');

  const result: DecisionBriefOutline = {
    decision_question: decisionQuestion(facts, stated),
    options,
    criteria,
    evidence_matrix,
    constraints: facts.constraints.map((c) => truncate(c, 200)),
    risks_mentioned: facts.sentences.filter((s) => CRITERIA.risk!.matches.test(s)).map((s) => truncate(s, 200)),
    open_questions,
    recommendation: {
      status: 'unresolved',
      reason: `No evidence has been gathered yet: ${evidence_matrix.length} comparisons in the matrix are open`,
    },
  };
  const unresolved = [
    `Recommendation: ${evidence_matrix.length} option-criterion comparisons need evidence`,
    ...open_questions.map((q) => `Open question: ${q}`),
  ];
  const used = facts.sentences.filter((s) => stated.some((o) => s.includes(o)) || Object.values(CRITERIA).some((c) => c.matches.test(s)) || s.endsWith('?'));
  return { result, unresolved, usedSentences: used };
}
