// Webhook endpoints for completion notifications (extension: beyond the published
// contract, whose "outbound notifications" are not shown). A tenant registers an
// HTTPS URL for run.awaiting_approval, run.completed, run.failed and
// run.needs_attention; deliveries are signed per Standard Webhooks (docs/runs.md
// "Completion notifications").
import { z } from 'zod';
import type { Config } from '../../config/env.ts';
import { errors } from '../../domain/errors.ts';
import { MAX_WEBHOOK_ENDPOINTS, NOTIFICATION_MAX_ATTEMPTS, WEBHOOK_DESCRIPTION_MAX_LENGTH } from '../../domain/notifications.ts';
import { type DeliveryUrlRules, deliveryUrlRules } from '../../domain/delivery-url.ts';
import { deliveryUrl } from '../schemas/delivery-url.ts';
import { NOTIFICATION_EVENTS } from '../../domain/runs/progress.ts';
import { secretHint, type WebhookDeliveryRow, type WebhookEndpointRow, type WebhookEndpointService } from '../../services/webhook-endpoints.ts';
import { ErrorObject, shouldRetryHeader, limitQuery } from '../contract/common.ts';
import { defineRoute } from '../contract/route.ts';

const EXTENSION = 'Extension: not part of the published contract (its outbound notifications are "not shown").';

const EventType = z.enum(NOTIFICATION_EVENTS).meta({ id: 'WebhookEventType' });

const WebhookEndpoint = z
  .object({
    object: z.literal('webhook_endpoint'),
    id: z.string().meta({ description: 'Endpoint id (`we_…`).' }),
    url: z.string(),
    events: z.array(EventType),
    description: z.string().nullable(),
    secret_hint: z
      .string()
      .meta({ description: "The signing secret's prefix and last four characters (`whsec_…abcd`); the secret itself is shown only in the create response." }),
    created_at: z.string(),
  })
  .meta({ id: 'WebhookEndpoint', description: 'Where completion notifications for the listed event types are sent.' });

const WebhookEndpointWithSecret = WebhookEndpoint.extend({
  secret: z.string().meta({
    description:
      'The signing secret (`whsec_` and base64), shown this once: store it now. Verify each delivery with it (Standard Webhooks: `new Webhook(secret).verify(rawBody, headers)`).',
  }),
}).meta({ id: 'WebhookEndpointWithSecret', description: 'A new endpoint, with its signing secret (returned only here).' });

const DeletedWebhookEndpoint = z
  .object({ object: z.literal('webhook_endpoint'), id: z.string(), deleted: z.literal(true) })
  .meta({ id: 'DeletedWebhookEndpoint' });

const WebhookEndpointList = z
  .object({ object: z.literal('list'), data: z.array(WebhookEndpoint), has_more: z.literal(false) })
  .meta({ id: 'WebhookEndpointList', description: `The tenant's live endpoints, newest first: at most ${MAX_WEBHOOK_ENDPOINTS}, so one page.` });

const WebhookDelivery = z
  .object({
    object: z.literal('webhook_delivery'),
    id: z.string().meta({ description: 'The delivery: `webhook_id:endpoint_id`.' }),
    webhook_id: z.string().meta({ description: 'The `webhook-id` header of every attempt: one per run and event type, the same for every endpoint.' }),
    endpoint_id: z.string(),
    run_id: z.string(),
    event_type: EventType,
    status: z.enum(['pending', 'delivered', 'failed']).meta({
      description: `pending: attempts remain (or one is under way); delivered: an attempt got a 2xx; failed: all ${NOTIFICATION_MAX_ATTEMPTS} attempts failed, or the endpoint was deleted meanwhile.`,
    }),
    attempts: z.int().meta({ description: 'Attempts made so far.' }),
    last_status_code: z.int().nullable().meta({ description: "The last attempt's HTTP status; null when it got no answer (connection failure or timeout)." }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'WebhookDelivery', description: 'One notification to one endpoint. Content-free: no payload or response body is kept.' });

const WebhookDeliveryList = z.object({ object: z.literal('list'), data: z.array(WebhookDelivery) }).meta({ id: 'WebhookDeliveryList' });

const EndpointParams = z.object({ endpoint_id: z.string().min(1).max(64) });

/** The create body; the URL rules depend on the deployment (loopback outside production only). */
function createRequest(rules: DeliveryUrlRules) {
  return z
    .strictObject({
      url: deliveryUrl(rules, 'Where deliveries are POSTed'),
      events: z
        .array(EventType)
        .min(1)
        .refine((list) => new Set(list).size === list.length, 'must not list an event type twice')
        .default([...NOTIFICATION_EVENTS])
        .meta({ description: 'The event types to deliver, each once; default all four.' }),
      description: z
        .string()
        .max(WEBHOOK_DESCRIPTION_MAX_LENGTH)
        .trim()
        .optional()
        .meta({ description: `Your note, at most ${WEBHOOK_DESCRIPTION_MAX_LENGTH} characters.` }),
    })
    .meta({ id: 'WebhookEndpointCreateRequest' });
}

const iso = (d: Date) => d.toISOString();

export function webhookEndpointView(row: WebhookEndpointRow) {
  return {
    object: 'webhook_endpoint' as const,
    id: row.id,
    url: row.url,
    events: row.events as (typeof NOTIFICATION_EVENTS)[number][],
    description: row.description,
    secret_hint: secretHint(row.secret),
    created_at: iso(row.createdAt),
  };
}

export function webhookDeliveryView(row: WebhookDeliveryRow) {
  return {
    object: 'webhook_delivery' as const,
    id: row.id,
    webhook_id: row.id.slice(0, row.id.indexOf(':')),
    endpoint_id: row.endpointId,
    run_id: row.runId,
    event_type: row.eventType as (typeof NOTIFICATION_EVENTS)[number],
    status: row.status,
    attempts: row.attempts,
    last_status_code: row.lastStatusCode,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

export function webhookEndpointRoutes(deps: { webhookEndpoints: WebhookEndpointService; platform: { config: Pick<Config, 'env'> } }) {
  const service = deps.webhookEndpoints;
  const rules = deliveryUrlRules(deps.platform.config.env);
  const tags = ['notifications'];
  const notFound = {
    description: "No live webhook endpoint with this id for your tenant (code not_found): unknown, another tenant's, or deleted.",
    schema: ErrorObject,
  };
  const missing = () => errors.notFound('No webhook endpoint with this id for your tenant.');
  return [
    defineRoute({
      method: 'post',
      path: '/v1/webhook-endpoints',
      operationId: 'createWebhookEndpoint',
      summary: 'Register a webhook endpoint for run notifications (extension)',
      description: `${EXTENSION} Registers a URL to receive run.awaiting_approval, run.completed, run.failed and run.needs_attention notifications (or the subset in \`events\`). Each is a JSON POST signed per Standard Webhooks (headers webhook-id, webhook-timestamp, webhook-signature) with the secret returned here, once. The body holds ids, the state and URLs, never the run's input, output or reasons; fetch \`data.status_url\` with your key for the rest. A delivery that gets no 2xx answer is retried with the same webhook-id, ${NOTIFICATION_MAX_ATTEMPTS} attempts in all over about 15 hours; deduplicate on webhook-id. At most ${MAX_WEBHOOK_ENDPOINTS} endpoints per tenant. Audited as webhook_endpoint.create (without the secret).`,
      tags,
      auth: 'core',
      refuseSecrets: true,
      request: { body: createRequest(rules) },
      responses: {
        201: { description: 'The new endpoint, with its signing secret (shown only this once).', schema: WebhookEndpointWithSecret },
        400: {
          description:
            'Invalid request (`param` names the field): a URL that is not https (or, outside production, loopback http), longer than 2048 characters, or names a private address (param url, code invalid_request); a URL or description carrying a credential (code credential_value_refused); an empty or repeating `events`.',
          schema: ErrorObject,
        },
        409: {
          description: `The tenant already has ${MAX_WEBHOOK_ENDPOINTS} endpoints (code webhook_endpoint_limit_reached); nothing was created. Not retryable (\`x-should-retry: false\`): delete one first.`,
          schema: ErrorObject,
          headers: { 'x-should-retry': shouldRetryHeader },
        },
      },
      async handler({ principal, body }) {
        const row = await service.create(
          { tenantId: principal!.tenantId, keyId: principal!.keyId },
          { url: body.url, events: body.events, description: body.description ? body.description : null },
        );
        return { status: 201, body: { ...webhookEndpointView(row), secret: row.secret } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/webhook-endpoints',
      operationId: 'listWebhookEndpoints',
      summary: 'Your webhook endpoints (extension)',
      description: `${EXTENSION} The live endpoints, newest first, with a hint of each secret, never the secret.`,
      tags,
      auth: 'core',
      responses: { 200: { description: 'All live endpoints.', schema: WebhookEndpointList } },
      async handler({ principal }) {
        const rows = await service.list(principal!.tenantId);
        return { status: 200, body: { object: 'list', data: rows.map(webhookEndpointView), has_more: false } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/webhook-endpoints/{endpoint_id}',
      operationId: 'getWebhookEndpoint',
      summary: 'A webhook endpoint (extension)',
      description: `${EXTENSION} Without its secret.`,
      tags,
      auth: 'core',
      request: { params: EndpointParams },
      responses: { 200: { description: 'The endpoint.', schema: WebhookEndpoint }, 404: notFound },
      async handler({ principal, params }) {
        const row = await service.get(principal!.tenantId, params.endpoint_id);
        if (!row) throw missing();
        return { status: 200, body: webhookEndpointView(row) };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/webhook-endpoints/{endpoint_id}',
      operationId: 'deleteWebhookEndpoint',
      summary: 'Delete a webhook endpoint (extension)',
      description: `${EXTENSION} Nothing more is sent to it, retries of pending deliveries included (they end failed). Audited as webhook_endpoint.delete. Deleting it again is 404.`,
      tags,
      auth: 'core',
      request: { params: EndpointParams },
      responses: { 200: { description: 'Deleted.', schema: DeletedWebhookEndpoint }, 404: notFound },
      async handler({ principal, params }) {
        const row = await service.remove({ tenantId: principal!.tenantId, keyId: principal!.keyId }, params.endpoint_id);
        if (!row) throw missing();
        return { status: 200, body: { object: 'webhook_endpoint', id: row.id, deleted: true } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/webhook-endpoints/{endpoint_id}/deliveries',
      operationId: 'listWebhookDeliveries',
      summary: "An endpoint's recent deliveries (extension)",
      description: `${EXTENSION} Most recently attempted first: webhook-id, run, event type, status, attempts and the last HTTP status. No payload or response body is kept.`,
      tags,
      auth: 'core',
      request: { params: EndpointParams, query: z.object({ limit: limitQuery(100, 20) }) },
      responses: { 200: { description: 'The deliveries.', schema: WebhookDeliveryList }, 404: notFound },
      async handler({ principal, params, query }) {
        const endpoint = await service.get(principal!.tenantId, params.endpoint_id);
        if (!endpoint) throw missing();
        const rows = await service.deliveries(principal!.tenantId, endpoint.id, query.limit);
        return { status: 200, body: { object: 'list', data: rows.map(webhookDeliveryView) } };
      },
    }),
  ];
}
