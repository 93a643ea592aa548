import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { errors } from '../../domain/errors.ts';
import type { HealthCheck, HealthReport } from '../../services/health.ts';
import { ErrorObject } from '../contract/common.ts';
import { defineRoute } from '../contract/route.ts';
import { requestIdFor } from '../middleware/request-id.ts';

export const SERVICE_NAME = 'governed-workspace-service';

const Health = z
  .object({
    status: z.literal('ok'),
    service: z.string(),
    build_date: z.string().optional(),
  })
  .meta({ id: 'Health' });

interface HealthDeps {
  checkHealth: HealthCheck;
  starting?: () => string | undefined;
  buildDate?: string;
}

/** The healthy answer's body, which never changes. */
const healthyBody = (buildDate: string | undefined) => ({ status: 'ok' as const, service: SERVICE_NAME, ...(buildDate ? { build_date: buildDate } : {}) });

/** Every dependency reachable: what /health's 200 says. */
const isHealthy = (report: HealthReport) => report.database === 'ok' && report.temporal === 'ok';

/** Whether the service is up for /health's 200, decided at once: `false` when starting, unhealthy, or not known yet. */
function answersHealthyNow(deps: HealthDeps): boolean {
  if (deps.starting?.() !== undefined) return false;
  const report = deps.checkHealth();
  return !(report instanceof Promise) && isHealthy(report);
}

/** A request for /health, with or without a query (the path Koa's `ctx.path` would see). */
const isHealthPath = (url: string | undefined) => url === '/health' || url?.startsWith('/health?') === true;

/**
 * GET and HEAD /health while healthy, answered before Koa (api/app.ts): probes ask every few seconds per
 * replica, and a healthy answer needs no routing, authentication, validation or request log (which
 * logs /health only when it fails), nor Koa's context, its promises (each of which also runs
 * tracing's promise hooks: runtime/promise-context-manager.ts) and its on-finished listener. Anything else
 * (starting, a dependency down, a status not yet known, another method or path) goes on to the route
 * below, which answers it with the error object and logs it. What it answers is the route's own 200,
 * serialised once, with the `x-request-id` every response carries; with metrics on it is counted as
 * the route would be (`record`). Returns whether it answered.
 */
export function healthProbe(
  deps: HealthDeps,
  record?: (method: string, elapsedSeconds: number) => void,
): (req: IncomingMessage, res: ServerResponse) => boolean {
  const body = Buffer.from(JSON.stringify(healthyBody(deps.buildDate)));
  const length = String(body.length);
  return function healthProbe(req, res) {
    const method = req.method;
    if ((method !== 'GET' && method !== 'HEAD') || !isHealthPath(req.url)) return false;
    const started = record ? performance.now() : 0;
    if (!answersHealthyNow(deps)) return false;
    res.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': length,
      'x-request-id': requestIdFor(req.headers['x-request-id']),
    });
    res.end(method === 'HEAD' ? undefined : body);
    record?.(method, (performance.now() - started) / 1000);
    return true;
  };
}

export function healthRoutes(deps: HealthDeps) {
  const healthy = { status: 200 as const, body: healthyBody(deps.buildDate) };
  const answer = (report: HealthReport) => {
    if (isHealthy(report)) return healthy;
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
