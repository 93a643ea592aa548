// Builds the OpenAPI 3.1.0 document from the same route declarations that the
// router validates with, so the document cannot drift from the code.
import { z } from 'zod';
import { createDocument, type ZodOpenApiOperationObject, type ZodOpenApiPathsObject } from 'zod-openapi';
import { ErrorObject, rateLimitHeader, rateLimitPolicyHeader, requestIdHeader, retryAfterHeader } from './common.ts';
import type { KeyKind } from '../../domain/api-keys.ts';
import { KINDS_OF } from '../middleware/auth.ts';
import { effectiveRateLimit, type ResponseSpec, type RouteSpec } from './route.ts';

/** The security scheme of each key kind. */
const SCHEME_OF: Record<KeyKind, string> = { core: 'coreKey', workspace: 'workspaceKey', approver: 'approverKey' };

const STANDARD_ERRORS: Record<number, string> = {
  400: 'Invalid request: malformed JSON, an unsupported parameter or a contract violation; `param` names the field.',
  401: 'Missing, unknown or revoked key, or a key of the wrong kind for this route (code invalid_api_key). Nothing runs and the body is not read. Authentication comes before the per-key limit, so the RateLimit headers are those of the `unauthenticated` policy: failed attempts are limited per client address, and past that limit the answer is 429.',
  413: 'The request body exceeds the size limit (code payload_too_large).',
  415: 'The request body is not `application/json` in UTF-8 (code unsupported_media_type): another media type (`+json` suffix types included) or a charset other than utf-8.',
  429: 'Rate limit exceeded (code rate_limit_exceeded): the per-key limit, or on a failed authentication the per-address one (RateLimit headers name which). Retryable: wait Retry-After seconds.',
  431: 'The request line or header block is larger than the server reads (code request_header_too_large); nothing was processed. Shorten the URL or headers.',
  500: 'Unexpected server error (code internal_error). Opaque; retry with bounded backoff.',
  503: 'A dependency (database or Temporal) is unavailable (code service_unavailable). Retry after Retry-After seconds, with bounded backoff.',
};

/** The trial's 429: its limit is per client address. */
const TRIAL_429 = 'Rate limit exceeded (code rate_limit_exceeded): the per-address limit of the trial. Retryable: wait Retry-After seconds.';

export const DOCUMENT_DESCRIPTION = `Governed Workspace Service: submit durable, governed work, watch its progress,
approve its external effects and get a verifiable completion receipt.

Errors follow contract \`svc.public-api.errors.v1\`: every non-2xx JSON body is an ErrorObject whose
\`request_id\` equals the \`x-request-id\` response header.

Rate limits: authenticated routes are limited per key, after authentication; failed authentications are
limited per client address (policy \`unauthenticated\`), and the public trial per client address. Responses
report the policy that applied in the IETF \`RateLimit\` and \`RateLimit-Policy\` headers (each response's
headers say on which statuses they are always sent).

Retrying: a 429 \`rate_limit_exceeded\` and a 503 carry \`Retry-After\`: wait that long, then retry. A 429
\`insufficient_credits\` or \`budget_exceeded\` and a 409 \`model_not_routable\` do not clear with time: they
carry \`x-should-retry: false\` (which the official OpenAI clients obey) and no \`Retry-After\`.

Request bodies are \`application/json\` in UTF-8; any other media type or charset is 415.`;

function standardErrorCodes(route: RouteSpec): number[] {
  // Any request can be refused at the HTTP layer for an oversized request line or header block.
  const codes = new Set<number>([431, 500]);
  if (route.request) codes.add(400);
  const add = (...more: number[]) => {
    for (const c of more) codes.add(c);
  };
  if (route.request?.body) add(413, 415);
  if (route.auth !== 'none') add(401, 503);
  // The limiter's store can fail too (503).
  if (effectiveRateLimit(route) !== 'none') add(429, 503);
  return [...codes];
}

/**
 * The headers a status of a route is answered with, as the middleware sets them (api/contract/router.ts):
 * - x-request-id: always.
 * - RateLimit / RateLimit-Policy, on a rate-limited route: set by whichever limiter ran, and one always
 *   runs before anything else can answer (a failed authentication spends a point of the per-address
 *   `unauthenticated` policy, so 401s carry them too), except that a 500 or 503 may come before it
 *   (the key lookup, the limiter's store), so there they are optional.
 * - Retry-After: on every 503, and on a 429 (routes whose 429 may be non-retryable say so in `spec.headers`).
 * Then the route's own `spec.headers`, which add or replace.
 */
export function responseHeaders(route: RouteSpec, status: number, spec: Pick<ResponseSpec, 'headers'> = {}): Record<string, z.ZodType> {
  const headers: Record<string, z.ZodType> = { 'x-request-id': requestIdHeader };
  if (effectiveRateLimit(route) !== 'none') {
    // Answered before any limiter ran: 431 (the HTTP parser), and possibly 500 / 503.
    const always = status !== 431 && status !== 500 && status !== 503;
    headers.RateLimit = always ? rateLimitHeader : rateLimitHeader.optional();
    headers['RateLimit-Policy'] = always ? rateLimitPolicyHeader : rateLimitPolicyHeader.optional();
  }
  if (status === 429 || status === 503) headers['Retry-After'] = retryAfterHeader;
  return { ...headers, ...spec.headers };
}

const EVENT_STREAM = 'text/event-stream';

/** The id a schema is published under (its `.meta({ id })`). */
const schemaId = (schema: z.ZodType) => (z.globalRegistry.get(schema)?.id as string | undefined) ?? 'object';

/** A text/event-stream body: text, whose `data:` lines each hold one JSON `eventData`. */
function eventStreamSchema(eventData: z.ZodType | undefined) {
  const data = eventData ? `each \`data:\` line holds one JSON ${schemaId(eventData)} (components/schemas/${schemaId(eventData)})` : 'see the description';
  return z.string().meta({ description: `Server-sent events (text, not JSON): ${data}.` });
}

function mediaType(contentType: string, schema: z.ZodType | undefined, eventData: z.ZodType | undefined): { schema?: z.ZodType } {
  if (contentType === EVENT_STREAM) return { schema: eventStreamSchema(eventData) };
  return schema ? { schema } : {};
}

function responseObject(route: RouteSpec, status: number, spec: ResponseSpec) {
  const headers = responseHeaders(route, status, spec);
  // A 204 has no body, so it declares no content.
  if (status === 204) return { description: spec.description, headers: z.object(headers) };
  const contentType = spec.contentType ?? 'application/json';
  const content: Record<string, { schema?: z.ZodType }> = { [contentType]: mediaType(contentType, spec.schema, spec.eventData) };
  for (const alt of spec.alternatives ?? []) content[alt.contentType] = mediaType(alt.contentType, alt.schema, alt.eventData);
  return { description: spec.description, headers: z.object(headers), content };
}

/** The `data:` schemas of every event stream, published as components (nothing else references them). */
function eventDataSchemas(routes: RouteSpec[]): Record<string, z.ZodType> {
  const out: Record<string, z.ZodType> = {};
  for (const route of routes) {
    for (const spec of Object.values(route.responses)) {
      for (const data of [spec.eventData, ...(spec.alternatives ?? []).map((a) => a.eventData)]) if (data) out[schemaId(data)] = data;
    }
  }
  return out;
}

function operation(route: RouteSpec): ZodOpenApiOperationObject {
  const responses: Record<string, ReturnType<typeof responseObject>> = {};
  for (const [status, spec] of Object.entries(route.responses)) {
    responses[status] = responseObject(route, Number(status), spec);
  }
  for (const status of standardErrorCodes(route)) {
    const description = status === 429 && effectiveRateLimit(route) === 'trial' ? TRIAL_429 : STANDARD_ERRORS[status];
    responses[String(status)] ??= responseObject(route, status, { description: description ?? 'Error.', schema: ErrorObject });
  }
  const op: ZodOpenApiOperationObject = {
    operationId: route.operationId,
    summary: route.summary,
    description: route.description,
    tags: route.tags,
    security: route.auth === 'none' ? [] : KINDS_OF[route.auth].map((kind) => ({ [SCHEME_OF[kind]]: [] })),
    responses: responses as ZodOpenApiOperationObject['responses'],
  };
  const { params, query, body, headers } = route.request ?? {};
  if (params || query || headers) {
    const located = Object.entries({ path: params, query, header: headers }).filter(([, schema]) => schema !== undefined);
    op.requestParams = Object.fromEntries(located) as ZodOpenApiOperationObject['requestParams'];
  }
  if (body) op.requestBody = { required: true, content: { 'application/json': { schema: body } } };
  return op;
}

export function buildOpenApiDocument(routes: RouteSpec[], serverUrl?: string): Record<string, unknown> {
  const paths: ZodOpenApiPathsObject = {};
  for (const route of routes.filter((r) => !r.hidden)) {
    paths[route.path] = { ...paths[route.path], [route.method]: operation(route) };
  }
  const document = createDocument({
    openapi: '3.1.0',
    info: { title: 'Governed Workspace Service API', version: 'current', description: DOCUMENT_DESCRIPTION },
    servers: serverUrl ? [{ url: serverUrl }] : undefined,
    paths,
    components: {
      schemas: { ErrorObject, ...eventDataSchemas(routes) },
      securitySchemes: {
        coreKey: {
          type: 'http',
          scheme: 'bearer',
          description: 'Core API key (`gws_core_…`). Workspace keys are refused on core routes; a core key never decides an approval.',
        },
        workspaceKey: {
          type: 'http',
          scheme: 'bearer',
          description: 'Workspace key (`gws_ws_…`): authenticates /v1/vault routes only.',
        },
        approverKey: {
          type: 'http',
          scheme: 'bearer',
          description:
            'Extension. Approver key (`gws_apv_…`), one per person, named: reads runs (get, list, events, the live feed), previews and decides approvals, and sets approval policies. Nothing else: a core or workspace key never decides an approval.',
        },
      },
    },
  }) as unknown as Record<string, unknown>;
  return generatorFriendly(document);
}

/** Keywords whose values are data (examples, defaults, constants), not schemas. */
const DATA_KEYWORDS = new Set(['example', 'examples', 'default', 'const', 'enum']);
/** Keywords whose value maps names (which may well be `default` or `example`) to schemas or objects. */
const NAME_MAPS = new Set(['properties', 'patternProperties', '$defs', 'schemas', 'paths', 'responses', 'headers', 'content', 'securitySchemes']);

/**
 * Rewrites the few forms of the generated document that code generators trip over, without changing
 * what validates: a schema that is only `{"type": "null"}` (zod's `z.null()`, such as chat's
 * `logprobs`) becomes `{"const": null}`. openapi-generator turns a `type: null` property into a model
 * named `Null` that it never writes (typescript-fetch: "Cannot find module './Null'"; python: "Codegen
 * Property not yet supported"), while `const: null` reads as "any, nullable" there and as `null` in
 * openapi-typescript. A `{"type": "null"}` member of an anyOf / oneOf (`.nullable()` of a reference
 * or an enum) stays: generators read that pair as "nullable X".
 */
export function generatorFriendly<T>(document: T): T {
  const visit = (node: unknown, inUnion: boolean, nameMap = false): unknown => {
    if (Array.isArray(node)) return node.map((item) => visit(item, inUnion));
    if (node === null || typeof node !== 'object') return node;
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
      if (nameMap) out[key] = visit(value, false);
      else if (DATA_KEYWORDS.has(key)) out[key] = value;
      else out[key] = visit(value, key === 'anyOf' || key === 'oneOf', NAME_MAPS.has(key));
    }
    if (!nameMap && !inUnion && out.type === 'null') {
      delete out.type;
      return { const: null, ...out };
    }
    return out;
  };
  return visit(document, false) as T;
}
