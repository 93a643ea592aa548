import { z } from 'zod';
import { errors } from '../../domain/errors.ts';
import type { HealthCheck, HealthReport } from '../../services/health.ts';
import { ErrorObject } from '../contract/common.ts';
import { defineRoute } from '../contract/route.ts';

export const SERVICE_NAME = 'governed-workspace-service';

const Health = z
  .object({
    status: z.literal('ok'),
    service: z.string(),
    build_date: z.string().optional(),
  })
  .meta({ id: 'Health' });

export function healthRoutes(deps: { checkHealth: HealthCheck; starting?: () => string | undefined; buildDate?: string }) {
  // The healthy answer never changes: built once, not per probe.
  const healthy = { status: 200 as const, body: { status: 'ok' as const, service: SERVICE_NAME, ...(deps.buildDate ? { build_date: deps.buildDate } : {}) } };
  const answer = (report: HealthReport) => {
    if (report.database === 'ok' && report.temporal === 'ok') return healthy;
    const down = Object.entries(report)
      .filter(([, state]) => state !== 'ok')
      .map(([name]) => name);
    throw errors.unavailable(`Service unavailable: ${down.join(' and ')} unreachable.`);
  };
  return [
    defineRoute({
      method: 'get',
      path: '/health',
      operationId: 'getHealth',
      summary: 'Service health',
      description:
        'Ready means ready: 200 only once start-up has finished (the migrations; under `npm start` also the worker polling, the schedules and the dev keys) and while the database and Temporal are reachable, checked in the background at most every second (so at most about 1 s old). 503 with the error object while the service is starting (the message says which step) or when either is unreachable.',
      tags: ['public'],
      auth: 'none',
      // Probes call it every few seconds per replica: only a 503 reaches the request log.
      logFailuresOnly: true,
      responses: {
        200: { description: 'Healthy.', schema: Health },
        503: { description: 'Still starting, or the database or Temporal is unreachable.', schema: ErrorObject },
      },
      // Not async: a fresh status held in memory (most probes) is answered without a promise.
      handler() {
        const step = deps.starting?.();
        if (step !== undefined) throw errors.starting(step);
        const report = deps.checkHealth();
        return report instanceof Promise ? report.then(answer) : answer(report);
      },
    }),
  ];
}
