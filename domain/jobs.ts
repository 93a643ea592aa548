// The catalog of GET /v1/jobs: the three customer jobs and the three public trial recipes.

export const TRIAL_RECIPE_IDS = ['bounded_work_plan', 'decision_brief_outline', 'research_question_map'] as const;
export type TrialRecipeId = (typeof TRIAL_RECIPE_IDS)[number];

export interface JobEntry {
  id: string;
  kind: 'customer_job' | 'trial_recipe';
  name: string;
  description: string;
  access: {
    path: 'core_api' | 'workspace_pilot' | 'public_trial';
    auth: 'core_key' | 'workspace_key' | 'none';
    /** How to reach it, e.g. "POST /v1/agent-runs". */
    routes: string[];
    terms: string;
  };
}

const CORE_TERMS =
  'Core credentials are provisioned after a confirmed engagement or checkout; commercial terms are confirmed before paid use. No flat per-run price.';

export const JOBS: readonly JobEntry[] = [
  {
    id: 'do_work',
    kind: 'customer_job',
    name: 'Do bounded work',
    description:
      'Submit durable work as a run: it is estimated, reserved, planned, approved where it has external effects, executed, verified and settled, and ends with a completion receipt.',
    access: { path: 'core_api', auth: 'core_key', routes: ['POST /v1/agent-runs', 'GET /v1/agent-runs/{run_id}'], terms: CORE_TERMS },
  },
  {
    id: 'research_and_decide',
    kind: 'customer_job',
    name: 'Research and decide with evidence',
    description: 'Ask questions and build decisions grounded in your context, with the evidence and the unresolved remainder kept visible.',
    access: { path: 'core_api', auth: 'core_key', routes: ['POST /v1/chat/completions', 'POST /v1/agent-runs'], terms: CORE_TERMS },
  },
  {
    id: 'continue_with_context',
    kind: 'customer_job',
    name: 'Continue with customer-controlled context',
    description: 'Keep context in a customer vault you control: search, correct, quarantine, forget and verify its integrity, isolated per tenant.',
    access: { path: 'workspace_pilot', auth: 'workspace_key', routes: ['/v1/vault'], terms: 'Pilot: workspace keys authenticate vault routes only.' },
  },
  {
    id: 'bounded_work_plan',
    kind: 'trial_recipe',
    name: 'Bounded work plan',
    description:
      'Turns an objective into a short, ordered plan of steps with a done-when check for each, the constraints it found, and what stays out of scope.',
    access: { path: 'public_trial', auth: 'none', routes: ['POST /v1/trial'], terms: 'Free, no key, no side effects, nothing stored.' },
  },
  {
    id: 'decision_brief_outline',
    kind: 'trial_recipe',
    name: 'Decision brief outline',
    description:
      'Frames the decision in an objective: the options it names, the criteria to compare them on, the evidence each comparison needs, and the open questions.',
    access: { path: 'public_trial', auth: 'none', routes: ['POST /v1/trial'], terms: 'Free, no key, no side effects, nothing stored.' },
  },
  {
    id: 'research_question_map',
    kind: 'trial_recipe',
    name: 'Research question map',
    description: 'Breaks an objective into a central question and themed sub-questions, each with the kind of evidence that would answer it.',
    access: { path: 'public_trial', auth: 'none', routes: ['POST /v1/trial'], terms: 'Free, no key, no side effects, nothing stored.' },
  },
];
