import { errors } from './errors.ts';

/** The model aliases that chat admits (contract: "Chat completion request"). */
export const MODEL_IDS = ['svc-workspace', 'svc-workspace-fast', 'svc-workspace-quality'] as const;
export type ModelId = (typeof MODEL_IDS)[number];

export const MODEL_DESCRIPTIONS: Record<ModelId, string> = {
  'svc-workspace': 'Balanced default for governed workspace tasks.',
  'svc-workspace-fast': 'Lower latency and cost; shorter answers.',
  'svc-workspace-quality': 'Most thorough answers; highest usage.',
};

/** The model id as an admitted alias; any other id is 404 model_not_found, as the contract says for unknown model ids. */
export function admitModel(id: string): ModelId {
  if (!(MODEL_IDS as readonly string[]).includes(id)) throw errors.modelNotFound();
  return id as ModelId;
}
