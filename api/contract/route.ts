// A route is declared once, as data: its request and response schemas validate
// at run time and build the OpenAPI document. Every route goes through here.
import type Koa from 'koa';
import type { z } from 'zod';
import type { Principal } from '../../services/keys.ts';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';
/**
 * none: public; core: core key; workspace: workspace (vault) key; approver: an approver key (decisions
 * and approval policies); reader: a core or an approver key (reading runs, which both need).
 */
export type AuthKind = 'none' | 'core' | 'workspace' | 'approver' | 'reader';

export interface ResponseSpec {
  description: string;
  /** JSON body schema; omit for an opaque or non-JSON body. */
  schema?: z.ZodType;
  /** Defaults to application/json. */
  contentType?: string;
  /** Other media types the same status may answer with (e.g. text/event-stream). */
  alternatives?: { contentType: string; schema?: z.ZodType; eventData?: z.ZodType }[];
  /**
   * For a text/event-stream answer, the JSON schema of each event's `data:`. The stream itself is
   * documented as a string (it is not JSON); this schema is published under components/schemas.
   */
  eventData?: z.ZodType;
  /**
   * Response headers of this status beyond (or replacing) the ones the builder derives from the
   * route's auth and rate limit (api/contract/openapi.ts); `.optional()` marks one that is not always sent.
   */
  headers?: Record<string, z.ZodType>;
}

export interface RouteInput<TParams, TQuery, TBody> {
  params: TParams;
  query: TQuery;
  body: TBody;
  /** Validated request headers (lower-case names), when the route declares any. */
  headers: Record<string, string | undefined>;
  /** Set on authenticated routes. */
  principal: Principal | undefined;
  ctx: Koa.Context;
}

export interface RouteResult {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export interface RouteSpec<TParams extends z.ZodType = z.ZodType, TQuery extends z.ZodType = z.ZodType, TBody extends z.ZodType = z.ZodType> {
  method: HttpMethod;
  /** OpenAPI-style path, e.g. /v1/agent-runs/{run_id}. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  auth: AuthKind;
  /** Which rate limit applies; authenticated routes default to the per-key limit. */
  rateLimit?: 'trial' | 'per-key' | 'none';
  request?: { params?: TParams; query?: TQuery; body?: TBody; headers?: z.ZodObject };
  responses: Record<number, ResponseSpec>;
  /** The route takes credential references: any string that looks like a credential value is refused first. */
  refuseSecrets?: boolean;
  /** Leave out of the OpenAPI document (e.g. static assets of /docs). */
  hidden?: boolean;
  /**
   * Write only failed answers (4xx, 5xx) to the request log: for probes such as /health, which
   * orchestrators and load balancers call every few seconds per replica.
   */
  logFailuresOnly?: boolean;
  handler: (input: RouteInput<z.output<TParams>, z.output<TQuery>, z.output<TBody>>) => Promise<RouteResult> | RouteResult;
}

/** Identity function that keeps each route's handler typed by its own schemas. */
export function defineRoute<TParams extends z.ZodType, TQuery extends z.ZodType, TBody extends z.ZodType>(spec: RouteSpec<TParams, TQuery, TBody>): RouteSpec {
  return spec as unknown as RouteSpec;
}

export function effectiveRateLimit(route: RouteSpec): 'trial' | 'per-key' | 'none' {
  return route.rateLimit ?? (route.auth === 'none' ? 'none' : 'per-key');
}
