import { z } from 'zod';
import { admitModel, MODEL_DESCRIPTIONS, MODEL_IDS, type ModelId } from '../../domain/models.ts';
import type { PricingTable } from '../../domain/pricing.ts';
import { ErrorObject } from '../contract/common.ts';
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

// Bounded like chat's `model` field. Any id within the bound that is not an alias (odd characters
// included) is 404 model_not_found, as an unknown id of the other `{id}` routes is their 404.
const ModelParams = z.object({
  model: z
    .string()
    .min(1)
    .max(100)
    .meta({ description: `A model id: one of ${MODEL_IDS.join(', ')}; any other id is 404 model_not_found.` }),
});

export function modelRoutes(pricing: PricingTable) {
  const modelView = (id: ModelId) => ({
    id,
    object: 'model' as const,
    created: MODELS_CREATED,
    owned_by: 'governed-workspace-service',
    description: MODEL_DESCRIPTIONS[id],
    credits_per_1k_tokens: pricing.modelRates[id],
  });
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
      handler: () => ({ status: 200, body: { object: 'list', data: MODEL_IDS.map(modelView) } }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/models/{model}',
      operationId: 'retrieveModel',
      summary: 'One admitted model (extension)',
      description:
        'The model object GET /v1/models lists for this id, in the shape the OpenAI client reads (`client.models.retrieve`). An unknown id is 404 model_not_found (param model); the id is not echoed.',
      tags: ['platform'],
      auth: 'core',
      request: { params: ModelParams },
      responses: {
        200: { description: 'The model.', schema: Model },
        404: { description: 'Unknown model id (code model_not_found).', schema: ErrorObject },
      },
      handler: ({ params }) => ({ status: 200, body: modelView(admitModel(params.model)) }),
    }),
  ];
}
