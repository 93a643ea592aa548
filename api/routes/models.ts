import { z } from 'zod';
import { MODEL_DESCRIPTIONS, MODEL_IDS } from '../../domain/models.ts';
import type { PricingTable } from '../../domain/pricing.ts';
import { defineRoute } from '../contract/route.ts';

// Fixed so the list is stable across restarts (OpenAI's `created` is a creation time).
const MODELS_CREATED = 1_767_225_600; // 2026-01-01T00:00:00Z

const Model = z
  .object({
    id: z.enum(MODEL_IDS),
    object: z.literal('model'),
    created: z.int(),
    owned_by: z.string(),
    description: z.string(),
    credits_per_1k_tokens: z.int().meta({ description: 'The rate runs and chat charge for this model (extension).' }),
  })
  .meta({ id: 'Model' });
const ModelList = z.object({ object: z.literal('list'), data: z.array(Model) }).meta({ id: 'ModelList' });

export function modelRoutes(pricing: PricingTable) {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/models',
      operationId: 'listModels',
      summary: 'Admitted model ids',
      description: 'The model ids that POST /v1/chat/completions and POST /v1/agent-runs admit, in the shape the OpenAI client reads, with their rates.',
      tags: ['platform'],
      auth: 'core',
      responses: { 200: { description: 'Model catalog.', schema: ModelList } },
      handler: () => ({
        status: 200,
        body: {
          object: 'list',
          data: MODEL_IDS.map((id) => ({
            id,
            object: 'model',
            created: MODELS_CREATED,
            owned_by: 'governed-workspace-service',
            description: MODEL_DESCRIPTIONS[id],
            credits_per_1k_tokens: pricing.modelRates[id],
          })),
        },
      }),
    }),
  ];
}
