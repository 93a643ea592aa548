// Builds the OpenAPI 3.1.0 document from the same route declarations that the
// router validates with, so the document cannot drift from the code.
import { z } from 'zod';
import { createDocument, type ZodOpenApiOperationObject, type ZodOpenApiPathsObject } from 'zod-openapi';
import {
  ErrorObject,
  rateLimitHeader,
  rateLimitPolicyHeader,
  requestIdHeader,
  retryAfterHeader,
} from './common.ts';
import { effectiveRateLimit, type ResponseSpec, type RouteSpec } from './route.ts';

const STANDARD_ERRORS: Record<number, string> = {
  400: 'Invalid request: malformed JSON, an unsupported parameter or a contract violation; `param` names the field.',
  401: 'Missing, unknown or revoked key, or a key of the wrong kind for this route (code invalid_api_key). Nothing runs.',
  413: 'The request body exceeds the size limit (code payload_too_large).',
  415: 'The request body is not application/json (code unsupported_media_type).',
  429: 'Rate limit exceeded (code rate_limit_exceeded). Honour Retry-After.',
  500: 'Unexpected server error (code internal_error). Opaque; retry with bounded backoff.',
  503: 'A dependency (database or Temporal) is unavailable (code service_unavailable). Retry with bounded backoff.',
};

export const DOCUMENT_DESCRIPTION = `Governed Workspace Service: submit durable, governed work, watch its progress,
approve its external effects and get a verifiable completion receipt.

Errors follow contract \`svc.public-api.errors.v1\`: every non-2xx JSON body is an ErrorObject whose
\`request_id\` equals the \`x-request-id\` response header.

Rate limits: authenticated routes are limited per key and report the IETF \`RateLimit\` and
\`RateLimit-Policy\` headers; the public trial is limited per client address. A 429 carries \`Retry-After\`.`;

function standardErrorCodes(route: RouteSpec): number[] {
  const codes = new Set<number>([500]);
  if (route.request) codes.add(400);
  if (route.request?.body) [413, 415].forEach((c) => codes.add(c));
  if (route.auth !== 'none') [401, 503].forEach((c) => codes.add(c));
  if (effectiveRateLimit(route) !== 'none') codes.add(429);
  return [...codes];
}

function responseObject(route: RouteSpec, status: number, spec: ResponseSpec) {
  const headers: Record<string, z.ZodType> = { 'x-request-id': requestIdHeader };
  if (effectiveRateLimit(route) === 'per-key') {
    headers.RateLimit = rateLimitHeader;
    headers['RateLimit-Policy'] = rateLimitPolicyHeader;
  }
  if (status === 429 || status === 503) headers['Retry-After'] = retryAfterHeader;
  const contentType = spec.contentType ?? 'application/json';
  const content: Record<string, { schema?: z.ZodType }> = { [contentType]: spec.schema ? { schema: spec.schema } : {} };
  for (const alt of spec.alternatives ?? []) content[alt.contentType] = alt.schema ? { schema: alt.schema } : {};
  return { description: spec.description, headers: z.object(headers), content };
}

function operation(route: RouteSpec): ZodOpenApiOperationObject {
  const responses: Record<string, ReturnType<typeof responseObject>> = {};
  for (const [status, spec] of Object.entries(route.responses)) {
    responses[status] = responseObject(route, Number(status), spec);
  }
  for (const status of standardErrorCodes(route)) {
    responses[String(status)] ??= responseObject(route, status, {
      description: STANDARD_ERRORS[status] ?? 'Error.',
      schema: ErrorObject,
    });
  }
  const op: ZodOpenApiOperationObject = {
    operationId: route.operationId,
    summary: route.summary,
    description: route.description,
    tags: route.tags,
    security: route.auth === 'none' ? [] : [{ [route.auth === 'core' ? 'coreKey' : 'workspaceKey']: [] }],
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
  return createDocument({
    openapi: '3.1.0',
    info: { title: 'Governed Workspace Service API', version: 'current', description: DOCUMENT_DESCRIPTION },
    servers: serverUrl ? [{ url: serverUrl }] : undefined,
    paths,
    components: {
      schemas: { ErrorObject },
      securitySchemes: {
        coreKey: {
          type: 'http',
          scheme: 'bearer',
          description: 'Core API key (`gws_core_…`). Workspace keys are refused on core routes.',
        },
        workspaceKey: {
          type: 'http',
          scheme: 'bearer',
          description: 'Workspace key (`gws_ws_…`): authenticates /v1/vault routes only.',
        },
      },
    },
  }) as unknown as Record<string, unknown>;
}
