import { errors } from '../../domain/errors.ts';
import { runTrial } from '../../domain/trial/run-trial.ts';
import { defineRoute } from '../contract/route.ts';
import { TrialRequest, TrialRun } from '../schemas/trial.ts';

export function trialRoutes() {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/trial',
      operationId: 'runTrial',
      summary: 'Run a bounded public trial recipe',
      description:
        'No key. Takes no external action, writes no customer memory and stores nothing; the result comes back directly with a completion receipt. Deterministic: the same request gives the same result and digests. Rate-limited per client address.',
      tags: ['public'],
      auth: 'none',
      rateLimit: 'trial',
      request: { body: TrialRequest },
      responses: { 200: { description: 'The trial result and its receipt.', schema: TrialRun } },
      handler({ body }) {
        if (!body.consent_to_process) throw errors.consentRequired();
        return { status: 200, body: runTrial(body.recipe_id, body.objective) };
      },
    }),
  ];
}
