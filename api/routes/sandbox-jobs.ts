// POST /v1/sandbox-jobs: admission-gated behind SANDBOX_JOBS_ENABLED. Validation
// errors and the admission outcome are explicit error objects, never a 401 in disguise.
import { z } from 'zod';
import type { Config } from '../../config/env.ts';
import { digestOf } from '../../domain/digest.ts';
import { errors } from '../../domain/errors.ts';
import { newId } from '../../domain/ids.ts';
import { SANDBOX_PROFILES } from '../../services/platform/catalogs.ts';
import { ErrorObject } from '../contract/common.ts';
import { defineRoute } from '../contract/route.ts';
import { SandboxJobInput } from '../schemas/platform.ts';

export function sandboxJobRoutes(deps: { config: Config }) {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/sandbox-jobs',
      operationId: 'createSandboxJob',
      summary: 'Admission-gated sandbox job',
      description: 'Validated first (400 with param); then admitted only when the second phase is enabled, else 403 sandbox_jobs_disabled.',
      tags: ['platform'],
      auth: 'core',
      request: { body: SandboxJobInput },
      responses: {
        202: {
          description: 'Admitted (not yet run).',
          schema: z.object({ object: z.literal('sandbox_job'), id: z.string(), status: z.literal('admitted'), profile: z.string(), request_digest: z.string() }).meta({ id: 'SandboxJob' }),
        },
        403: { description: 'Admission closed: the second phase is not enabled (code sandbox_jobs_disabled).', schema: ErrorObject },
      },
      handler({ body }) {
        if (!SANDBOX_PROFILES.some((p) => p.id === body.profile)) {
          throw errors.invalidRequest(`Unknown sandbox profile '${body.profile}'; see GET /v1/sandbox-profiles.`, 'profile');
        }
        if (!deps.config.platform.sandboxJobsEnabled) throw errors.sandboxJobsDisabled();
        return { status: 202, body: { object: 'sandbox_job', id: newId('sbx'), status: 'admitted', profile: body.profile, request_digest: digestOf(body) } };
      },
    }),
  ];
}
