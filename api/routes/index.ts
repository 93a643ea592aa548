// Every route of the service, in the order the OpenAPI document lists them.
import type { RouteSpec } from '../contract/route.ts';
import type { HealthReport } from '../../services/health.ts';
import { docsRoutes } from './docs.ts';
import { healthRoutes } from './health.ts';
import { jobRoutes } from './jobs.ts';
import { modelRoutes } from './models.ts';
import { trialRoutes } from './trial.ts';

export interface RouteDeps {
  checkHealth: () => Promise<HealthReport>;
  buildDate?: string;
}

export function allRoutes(deps: RouteDeps, getDocument: () => Record<string, unknown>): RouteSpec[] {
  return [
    ...healthRoutes(deps),
    ...jobRoutes(),
    ...trialRoutes(),
    ...modelRoutes(),
    ...docsRoutes(getDocument),
  ];
}
