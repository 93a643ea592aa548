// Documented zod descriptors of the platform routes; the same schemas validate requests.
import { z } from 'zod';
import { CREDENTIAL_REFERENCE } from '../../domain/secrets.ts';
import { MODEL_IDS } from '../../domain/models.ts';
import { PROVIDERS } from '../../domain/pricing.ts';
import type { DeliveryUrlRules } from '../../domain/delivery-url.ts';
import { deliveryUrl } from './delivery-url.ts';

export const CredentialReference = z
  .string()
  .regex(CREDENTIAL_REFERENCE, 'must be a reference: env:NAME or secret://path, never a credential value')
  .meta({ id: 'CredentialReference', description: 'Where a credential lives (env:NAME or secret://path). Values are refused.' });

const name = z
  .string()
  .trim()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'must be 1-64 letters, digits, dot, dash or underscore');

export const ConformanceDescriptor = z
  .strictObject({
    id: name,
    name: z.string().max(120).trim().min(1),
    capabilities: z.array(z.string().min(1).max(64)).min(1).max(32),
    models: z.array(z.string().min(1).max(100)).min(1).max(64),
    streaming: z.boolean(),
    structured_output: z.boolean(),
    credential: z.strictObject({ reference: CredentialReference }).optional(),
  })
  .meta({ id: 'AdapterConformanceDescriptor' });

export const OnboardingProfile = z
  .strictObject({
    organization: z.string().max(200).trim().min(1),
    jobs: z.array(z.enum(['do_work', 'research_and_decide', 'continue_with_context'])).min(1),
    expected_monthly_runs: z.int().min(0).max(10_000_000).optional(),
    webhook_url: z.url().optional(),
    provider_credential: CredentialReference.optional(),
    data_residency: z.enum(['eu', 'us', 'any']).optional(),
  })
  .meta({ id: 'OnboardingProfile' });

export const ProviderCredentialCheck = z
  .strictObject({ provider: z.enum(['upstream']), reference: CredentialReference })
  .meta({ id: 'ProviderCredentialReference' });

export const SkillComposition = z
  .strictObject({
    name,
    steps: z
      .array(z.strictObject({ skill: z.string().min(1).max(32), note: z.string().max(200).optional() }))
      .min(1)
      .max(64),
    approve_external_effects: z.boolean().default(false),
  })
  .meta({ id: 'SkillComposition' });

export const EvaluationDescriptor = z
  .strictObject({
    suite_id: z.string().min(1).max(64),
    cases: z
      .array(z.strictObject({ input: z.string().min(1).max(4000), expected: z.string().max(4000).optional() }))
      .min(1)
      .max(100),
  })
  .meta({ id: 'EvaluationDescriptor' });

export const PatchCandidate = z
  .strictObject({
    benchmark: z.string().max(100).trim().min(1),
    instance_id: z.string().max(200).trim().min(1),
    patch: z.string().min(1).max(262_144).meta({ description: 'A unified diff.' }),
  })
  .meta({ id: 'PatchCandidatePacket' });

export const RoutingPolicyInput = z.strictObject({ model: z.enum(MODEL_IDS), provider: z.enum(PROVIDERS) }).meta({ id: 'RoutingPolicyInput' });

export const RoutingPreviewInput = z
  .strictObject({ model: z.enum(MODEL_IDS), provider: z.enum(PROVIDERS).optional() })
  .meta({ id: 'RoutingPreviewInput', description: 'A model alias, and optionally the provider a policy would set, to preview without executing.' });

export const BudgetInput = z
  .strictObject({
    name,
    scope: z.enum(['runs', 'chat', 'all']),
    period: z.enum(['day', 'month', 'total']),
    limit_credits: z.int().min(0).max(1_000_000_000),
  })
  .meta({ id: 'BudgetInput' });

// Traces are metadata: names and attribute keys are bounded identifiers, never free text; string
// values are screened for credentials and card numbers by the route (refuseSecrets).
const identifier = (max: number) =>
  z
    .string()
    .regex(new RegExp(`^[A-Za-z0-9][A-Za-z0-9._:/-]{0,${max - 1}}$`), `must be an identifier: 1-${max} letters, digits, dot, colon, slash, dash or underscore`);
const attributeValue = z.union([z.string().max(200), z.number(), z.boolean()]);
export const TraceInput = z
  .strictObject({
    name,
    run_id: z.string().max(64).optional(),
    spans: z
      .array(
        z.strictObject({
          name: identifier(100),
          duration_ms: z.number().min(0).max(86_400_000),
          status: z.enum(['ok', 'error']),
          attributes: z.record(identifier(64), attributeValue).optional(),
        }),
      )
      .min(1)
      .max(200),
  })
  .meta({ id: 'TraceInput', description: 'Metadata only: span names, durations, statuses and small attributes. Content fields are refused.' });

/** A trace export descriptor; its endpoint follows the one delivery URL rule of the deployment. */
export function traceExportInput(rules: DeliveryUrlRules) {
  return z
    .strictObject({
      name,
      kind: z.enum(['otlp_http', 'webhook']),
      endpoint: deliveryUrl(rules, 'Where traces would be sent'),
      credential: CredentialReference.optional(),
    })
    .meta({ id: 'TraceExportInput' });
}

export const EvaluationRunInput = z
  .strictObject({
    suite_id: z.string().min(1).max(64),
    execution: z.enum(['customer', 'connected']),
    descriptor: EvaluationDescriptor,
    results: z.strictObject({ passed: z.int().min(0), failed: z.int().min(0), notes: z.string().max(1000).optional() }),
  })
  .meta({ id: 'EvaluationRunInput' });

export const SandboxJobInput = z
  .strictObject({
    profile: z.string().min(1).max(32),
    command: z.array(z.string().min(1).max(1000)).min(1).max(64),
    timeout_seconds: z.int().min(1).max(3600).default(300),
  })
  .meta({ id: 'SandboxJobInput' });
