// Validation routes: descriptors checked against documented zod schemas and
// the live catalogs. Nothing here executes or stores anything.
import { z } from 'zod';
import type { Config } from '../../config/env.ts';
import { digestOf } from '../../domain/digest.ts';
import { errors } from '../../domain/errors.ts';
import {
  ADAPTER_CAPABILITIES,
  EVALUATION_SUITES,
  evaluationRunProblem,
  providerCatalog,
  REQUIRED_CAPABILITIES,
  SKILL_LIMITS,
  SKILL_TYPES,
} from '../../services/platform/catalogs.ts';
import { ErrorObject } from '../contract/common.ts';
import { defineRoute } from '../contract/route.ts';
import {
  ConformanceDescriptor,
  EvaluationDescriptor,
  OnboardingProfile,
  PatchCandidate,
  ProviderCredentialCheck,
  RoutingPreviewInput,
  SkillComposition,
} from '../schemas/platform.ts';
import type { TenantStatus } from './platform-catalogs.ts';

const result = (object: string, description: string) => z.looseObject({ object: z.literal(object) }).meta({ id: `Result_${object}`, description });
const invalid = (description: string) => ({ description, schema: ErrorObject });

function validationRoute<T extends z.ZodType>(spec: {
  path: string;
  operationId: string;
  summary: string;
  object: string;
  body: T;
  refuseSecrets?: boolean;
  extra?: Record<number, { description: string; schema: z.ZodType }>;
  handle: (body: z.output<T>, tenantId: string) => Promise<Record<string, unknown>> | Record<string, unknown>;
}) {
  return defineRoute({
    method: 'post',
    path: spec.path,
    operationId: spec.operationId,
    summary: spec.summary,
    tags: ['platform'],
    auth: 'core',
    refuseSecrets: spec.refuseSecrets,
    request: { body: spec.body },
    responses: { 200: { description: spec.summary, schema: result(spec.object, spec.summary) }, ...spec.extra },
    handler: async ({ body, principal }) => ({ status: 200, body: { object: spec.object, ...(await spec.handle(body as z.output<T>, principal!.tenantId)) } }),
  });
}

function isUnifiedDiff(patch: string): { files: string[]; added: number; removed: number } | null {
  const files = [...patch.matchAll(/^\+\+\+ (?:b\/)?(\S+)/gm)].map((m) => m[1]!);
  if (!/^--- /m.test(patch) || files.length === 0 || !/^@@ -\d+(,\d+)? \+\d+(,\d+)? @@/m.test(patch)) return null;
  const lines = patch.split('\n');
  return {
    files,
    added: lines.filter((l) => l.startsWith('+') && !l.startsWith('+++')).length,
    removed: lines.filter((l) => l.startsWith('-') && !l.startsWith('---')).length,
  };
}

export function platformValidationRoutes(deps: {
  config: Config;
  tenantStatus(tenantId: string): Promise<TenantStatus>;
  providerFor(tenantId: string, model: string): Promise<string>;
}) {
  const { config } = deps;
  return [
    validationRoute({
      path: '/v1/adapters/conformance/validate',
      operationId: 'validateAdapterConformance',
      summary: 'Check an adapter descriptor against the conformance contract',
      object: 'adapter_conformance_result',
      body: ConformanceDescriptor,
      refuseSecrets: true,
      extra: { 400: invalid('Descriptor not conformant (code not_conformant) or invalid.') },
      handle(d) {
        const missing = REQUIRED_CAPABILITIES.filter((c) => !d.capabilities.includes(c));
        if (missing.length) throw errors.notConformant(`Missing required capability: ${missing.join(', ')}.`, 'capabilities');
        const unknown = d.capabilities.findIndex((c) => !(ADAPTER_CAPABILITIES as readonly string[]).includes(c));
        if (unknown >= 0) throw errors.notConformant(`Unknown capability '${d.capabilities[unknown]}'.`, `capabilities[${unknown}]`);
        if (d.structured_output && !d.capabilities.includes('chat.structured_output')) {
          throw errors.notConformant('structured_output is true but chat.structured_output is not declared.', 'structured_output');
        }
        return { admitted: true, descriptor_digest: digestOf(d) };
      },
    }),
    validationRoute({
      path: '/v1/onboarding/validate',
      operationId: 'validateOnboardingProfile',
      summary: 'Credential-safe setup readiness checklist for a setup profile',
      object: 'onboarding_checklist',
      body: OnboardingProfile,
      refuseSecrets: true,
      extra: { 400: invalid('Invalid setup profile.') },
      async handle(p, tenantId) {
        const s = await deps.tenantStatus(tenantId);
        const upstream = providerCatalog(config).find((x) => x.id === 'upstream')!;
        return {
          ready: s.keys.core > 0 && s.availableCredits > 0,
          checklist: [
            { item: 'core_key', ok: s.keys.core > 0 },
            { item: 'credits', ok: s.availableCredits > 0 },
            { item: 'workspace_key', ok: !p.jobs.includes('continue_with_context') || s.keys.workspace > 0 },
            {
              item: 'webhook',
              ok: !p.webhook_url || s.webhookConfigured,
              note: p.webhook_url ? 'Your operator configures the webhook URL you named.' : undefined,
            },
            { item: 'provider_credential', ok: !p.provider_credential || upstream.status === 'available', note: 'A reference was received; no value.' },
          ],
        };
      },
    }),
    validationRoute({
      path: '/v1/provider-credentials/validate',
      operationId: 'validateProviderCredentialReference',
      summary: 'Admit a provider credential reference without receiving a value',
      object: 'credential_reference_result',
      body: ProviderCredentialCheck,
      refuseSecrets: true,
      extra: { 400: invalid('Invalid reference, or a credential value (code credential_value_refused).') },
      handle: (c) => ({ admitted: true, provider: c.provider, reference: c.reference, value_received: false }),
    }),
    validationRoute({
      path: '/v1/skills/validate',
      operationId: 'validateSkillComposition',
      summary: 'Admit a skill composition for customer-local execution',
      object: 'skill_composition_result',
      body: SkillComposition,
      extra: { 400: invalid('Invalid composition.') },
      handle(c) {
        if (c.steps.length > SKILL_LIMITS.maxSteps) throw errors.invalidRequest(`At most ${SKILL_LIMITS.maxSteps} steps.`, 'steps');
        const bad = c.steps.findIndex((s) => !(s.skill in SKILL_TYPES));
        if (bad >= 0) throw errors.invalidRequest(`Unknown skill '${c.steps[bad]!.skill}'; see GET /v1/skills.`, `steps[${bad}].skill`);
        const external = c.steps.findIndex((s) => SKILL_TYPES[s.skill as keyof typeof SKILL_TYPES].effect === 'external');
        if (external >= 0 && !c.approve_external_effects) {
          throw errors.invalidRequest('A step with an external effect needs approve_external_effects: true.', `steps[${external}].skill`);
        }
        return { admitted: true, execution: 'customer-local', composition_digest: digestOf(c) };
      },
    }),
    validationRoute({
      path: '/v1/evaluations/validate',
      operationId: 'validateEvaluationDescriptor',
      summary: 'Admit a digest-bound evaluation descriptor',
      object: 'evaluation_descriptor_result',
      body: EvaluationDescriptor,
      handle(d) {
        const problem = evaluationRunProblem({ suite_id: d.suite_id, descriptor: d });
        if (problem) throw errors.invalidRequest(problem.message, problem.param === 'descriptor.cases' ? 'cases' : problem.param);
        const suite = EVALUATION_SUITES.find((s) => s.id === d.suite_id)!;
        return { admitted: true, suite_digest: suite.digest, descriptor_digest: digestOf(d), cases: d.cases.length };
      },
    }),
    validationRoute({
      path: '/v1/evaluations/patch-candidate',
      operationId: 'submitPatchCandidate',
      summary: 'Admit an untrusted public benchmark patch candidate',
      object: 'patch_candidate',
      body: PatchCandidate,
      extra: {
        400: invalid('Packet not admissible (not a unified diff, or invalid).'),
        503: invalid('Patch candidates are not accepted on this deployment (code patch_candidate_unavailable).'),
      },
      handle(p) {
        if (!config.platform.patchCandidatesEnabled) throw errors.patchCandidateUnavailable();
        const diff = isUnifiedDiff(p.patch);
        if (!diff) throw errors.invalidRequest('patch must be a unified diff (---, +++ and @@ hunks).', 'patch');
        return {
          trust: 'untrusted',
          executed: false,
          candidate_digest: digestOf(p),
          benchmark: p.benchmark,
          instance_id: p.instance_id,
          files_touched: diff.files,
          lines_added: diff.added,
          lines_removed: diff.removed,
        };
      },
    }),
    validationRoute({
      path: '/v1/routing/preview',
      operationId: 'previewRouting',
      summary: 'Non-executing routing plan',
      object: 'routing_plan',
      body: RoutingPreviewInput,
      extra: { 400: invalid('Invalid routing policy.') },
      async handle(r, tenantId) {
        const current = await deps.providerFor(tenantId, r.model);
        const chosen = r.provider ?? current;
        const provider = providerCatalog(config).find((p) => p.id === chosen)!;
        return {
          model: r.model,
          provider: chosen,
          source: r.provider ? 'previewed policy' : current === 'local' ? 'default' : 'tenant routing policy',
          provider_status: provider.status,
          would_fail: provider.status !== 'available',
          fallback: null,
          executed: false,
        };
      },
    }),
  ];
}
