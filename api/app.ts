// Builds the Koa application from its dependencies. Nothing here opens
// connections: the caller (bin/*) composes services and passes them in, so
// tests can build an app with, say, tiny rate limits or an unreachable Temporal.
import type { IncomingMessage, ServerResponse } from 'node:http';
import Koa from 'koa';
import type { Logger } from 'pino';
import type { Config } from '../config/env.ts';
import { errors } from '../domain/errors.ts';
import type { RateLimiters } from '../services/rate-limiters.ts';
import { buildOpenApiDocument } from './contract/openapi.ts';
import { mountRoutes } from './contract/router.ts';
import type { Authenticator } from './middleware/auth.ts';
import { recordsMetrics, requestMetrics } from '../services/metrics.ts';
import { outageLog } from '../services/outage-log.ts';
import { errorHandler } from './middleware/error-handler.ts';
import { requestId } from './middleware/request-id.ts';
import { requestLog } from './middleware/request-log.ts';
import { type HeadSampling, serverSpan } from './middleware/server-span.ts';
import { codecCors } from './routes/codec.ts';
import { healthProbe } from './routes/health.ts';
import { allRoutes, type RouteDeps } from './routes/index.ts';

export interface AppDeps extends RouteDeps {
  config: Config;
  logger: Logger;
  authenticate: Authenticator;
  rateLimiters: RateLimiters;
  /** True when this process exports traces (runtime/telemetry.ts): the trace context middleware runs. */
  tracing?: boolean;
  /** With tracing and our default sampler: a new trace is drawn before its span is made. */
  headSampling?: HeadSampling;
}

/** What a request answered before Koa returns to the server: already settled, shared by all. */
const ANSWERED = Promise.resolve();

/** A Koa app whose request handler first offers each request to `front`, which answers it or declines. */
class FrontedApp extends Koa {
  constructor(
    options: { proxy: boolean },
    private readonly front: (req: IncomingMessage, res: ServerResponse) => boolean,
  ) {
    super(options);
  }

  override callback(): ReturnType<Koa['callback']> {
    const handle = super.callback();
    const front = this.front;
    return (req, res) => (front(req as IncomingMessage, res as ServerResponse) ? ANSWERED : handle(req, res));
  }
}

export function createApp(deps: AppDeps): Koa {
  // A healthy /health is answered before Koa (api/routes/health.ts); any other goes on to its route.
  const recordHealth = recordsMetrics() ? (method: string, seconds: number) => requestMetrics.observe(method, '/health', 200, seconds) : undefined;
  const app = new FrontedApp({ proxy: deps.config.http.trustProxy }, healthProbe(deps, recordHealth));
  // Koa's default error listener prints stack traces; our error handler already logged.
  app.silent = true;

  let document: Record<string, unknown> | undefined;
  const routes = allRoutes(deps, () => (document ??= buildOpenApiDocument(routes, deps.config.http.publicBaseUrl)));
  const routeMiddleware = mountRoutes(routes, {
    authenticate: deps.authenticate,
    rateLimiters: deps.rateLimiters,
    clientAddress: (ctx) => ctx.ip,
    checkResponses: deps.config.http.checkResponses,
    // Bodies are read per route, after authentication and the rate limit (api/contract/router.ts).
    bodyLimitBytes: deps.config.http.bodyLimitBytes,
    ...(deps.starting ? { starting: deps.starting } : {}),
  });

  app.use(requestId());
  // Only with tracing on: off, a request pays for nothing of it.
  if (deps.tracing) app.use(serverSpan(deps.headSampling));
  app.use(requestLog(deps.logger));
  app.use(errorHandler(deps.logger, outageLog(deps.logger, deps.checkHealth)));
  if (deps.codecEndpoint) app.use(codecCors(deps.codecEndpoint));
  for (const middleware of routeMiddleware) app.use(middleware);
  return app;
}

/**
 * What answers while start-up has not yet made the database ready for the API (runtime/startup.ts):
 * every request, /health included, is a 503 "starting (<step>)" with the contract's error object,
 * so a client or probe gets an answer instead of a refused connection. The full app replaces it
 * (RunningServer.serve) once the database is migrated.
 */
export function createStartingApp(config: Config, logger: Logger, starting: () => string | undefined): Koa {
  const app = new Koa({ proxy: config.http.trustProxy });
  app.silent = true;
  app.use(requestId());
  app.use(requestLog(logger));
  app.use(errorHandler(logger));
  app.use(() => {
    throw errors.starting(starting() ?? 'starting');
  });
  return app;
}
