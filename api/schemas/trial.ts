import { z } from 'zod';
import { TRIAL_RECIPE_IDS } from '../../domain/jobs.ts';
import { CompletionReceipt } from './receipt.ts';

export const TrialRequest = z
  .strictObject({
    recipe_id: z.enum(TRIAL_RECIPE_IDS),
    objective: z
      .string()
      .max(4000, 'objective must be at most 4000 characters')
      .trim()
      .min(1, 'objective must not be empty')
      .meta({ description: 'Free text describing the task: at most 4000 characters as sent, and not only spaces.' }),
    consent_to_process: z.boolean().meta({ description: 'Must be true: the caller consents to processing the objective.' }),
  })
  .meta({ id: 'TrialRequest' });

const WorkPlan = z
  .object({
    goal: z.string(),
    steps: z
      .array(
        z.object({
          order: z.int().min(1),
          action: z.string(),
          focus_terms: z.array(z.string()),
          done_when: z.string(),
          effort: z.enum(['small', 'medium', 'large']),
          effect: z.literal('read'),
        }),
      )
      .max(7),
    constraints: z.array(z.string()),
    quantities: z.array(z.string()),
    out_of_scope: z.array(z.string()),
    bounds: z.object({ max_steps: z.int(), clauses_found: z.int(), steps_truncated: z.boolean() }),
    context: z.array(z.string()),
  })
  .meta({ id: 'TrialBoundedWorkPlan', title: 'bounded_work_plan result' });

const DecisionBrief = z
  .object({
    decision_question: z.string(),
    options: z.array(z.object({ id: z.string(), label: z.string(), source: z.enum(['stated', 'baseline']) })),
    criteria: z.array(z.object({ id: z.string(), source: z.enum(['stated', 'key_term']) })),
    evidence_matrix: z.array(z.object({ option_id: z.string(), criterion_id: z.string(), evidence_needed: z.string() })),
    constraints: z.array(z.string()),
    risks_mentioned: z.array(z.string()),
    open_questions: z.array(z.string()),
    recommendation: z.object({ status: z.literal('unresolved'), reason: z.string() }),
  })
  .meta({ id: 'TrialDecisionBriefOutline', title: 'decision_brief_outline result' });

const ResearchMap = z
  .object({
    central_question: z.string(),
    themes: z.array(
      z.object({
        term: z.string(),
        grounding: z.array(z.string()),
        questions: z.array(
          z.object({
            kind: z.enum(['definition', 'measurement', 'cause', 'relation']),
            question: z.string(),
            evidence: z.string(),
          }),
        ),
      }),
    ),
    assumptions_to_test: z.array(z.string()),
    stated_questions: z.array(z.string()),
  })
  .meta({ id: 'TrialResearchQuestionMap', title: 'research_question_map result' });

export const TrialRun = z
  .object({
    object: z.literal('trial_run'),
    trial_id: z.string().meta({ description: 'Deterministic: the same request gives the same id.' }),
    recipe_id: z.enum(TRIAL_RECIPE_IDS),
    status: z.enum(['completed', 'needs_attention']).meta({
      description: 'needs_attention when receipt.unresolved is not empty: open items are never reported as success.',
    }),
    result: z.union([WorkPlan, DecisionBrief, ResearchMap]).meta({ description: "The recipe's result; its shape follows recipe_id." }),
    receipt: CompletionReceipt,
  })
  .meta({ id: 'TrialRun', description: 'A no-side-effect result with its completion receipt. Nothing is stored.' });
