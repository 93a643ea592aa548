// POST /v1/sandbox-jobs: admission-gated behind SANDBOX_JOBS_ENABLED. Validation
// errors and the admission outcome are explicit error objects, never a 401 in disguise.
// This deployment has no sandbox runner, so an enabled phase still admits nothing:
// saying "admitted" for a job nothing will run would claim work that never happens.
import type { Config } from '../../config/env.ts';
import { errors } from '../../domain/errors.ts';
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
      description:
        'Validated first (400 with param). Then: 403 sandbox_jobs_disabled when the second phase is not enabled; 403 sandbox_runner_not_configured when it is but no sandbox runner is configured (this deployment has none). Nothing is admitted or stored that nothing would run.',
      tags: ['platform'],
      auth: 'core',
      request: { body: SandboxJobInput },
      responses: {
        403: {
          description:
            'Not admitted: the second phase is not enabled (code sandbox_jobs_disabled), or no sandbox runner is configured (code sandbox_runner_not_configured).',
          schema: ErrorObject,
        },
      },
      handler({ body }) {
        if (!SANDBOX_PROFILES.some((p) => p.id === body.profile)) {
          throw errors.invalidRequest(`Unknown sandbox profile '${body.profile}'; see GET /v1/sandbox-profiles.`, 'profile');
        }
        if (!deps.config.platform.sandboxJobsEnabled) throw errors.sandboxJobsDisabled();
        throw errors.sandboxRunnerNotConfigured();
      },
    }),
  ];
}
