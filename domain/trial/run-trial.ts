// Runs one public trial recipe: pure and deterministic, so the same request
// always yields the same result and the same digests. Nothing is stored.
import { digestOf } from '../digest.ts';
import { redactSecrets } from '../secrets.ts';
import type { TrialRecipeId } from '../jobs.ts';
import { type CompletionReceipt, coverageRatio } from '../receipt.ts';
import { analyzeObjective } from '../text/analyze.ts';
import { boundedWorkPlan } from './bounded-work-plan.ts';
import { decisionBriefOutline } from './decision-brief-outline.ts';
import type { RecipeOutput } from './recipe.ts';
import { researchQuestionMap } from './research-question-map.ts';

const RECIPES: Record<TrialRecipeId, (facts: ReturnType<typeof analyzeObjective>) => RecipeOutput<unknown>> = {
  bounded_work_plan: boundedWorkPlan,
  decision_brief_outline: decisionBriefOutline,
  research_question_map: researchQuestionMap,
};

export interface TrialRun {
  object: 'trial_run';
  trial_id: string;
  recipe_id: TrialRecipeId;
  /** completed when nothing is left open; needs_attention when `receipt.unresolved` is not empty. */
  status: 'completed' | 'needs_attention';
  result: unknown;
  receipt: CompletionReceipt;
}

export function runTrial(recipeId: TrialRecipeId, given: string): TrialRun {
  // Nothing that looks like a credential is echoed back: the recipes see it as [redacted].
  const objective = redactSecrets(given);
  const facts = analyzeObjective(objective);
  const output = RECIPES[recipeId](facts);
  const inputDigest = digestOf({ recipe_id: recipeId, objective });
  const resultDigest = digestOf(output.result);
  const trialId = `trial_${inputDigest.slice('sha256:'.length, 'sha256:'.length + 24)}`;
  const used = new Set(output.usedSentences).size;
  return {
    object: 'trial_run',
    trial_id: trialId,
    recipe_id: recipeId,
    status: output.unresolved.length > 0 ? 'needs_attention' : 'completed',
    result: output.result,
    receipt: {
      receipt_id: `rcpt_${resultDigest.slice('sha256:'.length, 'sha256:'.length + 24)}`,
      subject: { kind: 'trial', id: trialId },
      verification_class: 'deterministic_derivation',
      action_boundary: { effects_requested: [], effects_approved: [], effects_performed: [] },
      source_coverage: {
        sources: [
          {
            source: 'objective',
            digest: digestOf(objective),
            characters: objective.length,
            units_total: facts.sentences.length,
            units_used: used,
          },
        ],
        coverage_ratio: coverageRatio(used, facts.sentences.length),
      },
      digests: { algorithm: 'sha256', input: inputDigest, result: resultDigest },
      unresolved: output.unresolved,
      persisted: false,
    },
  };
}
