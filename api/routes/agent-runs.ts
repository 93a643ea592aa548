// Durable runs: create (idempotent), read, list, export, approve, cancel.
import type Koa from 'koa';
import { z } from 'zod';
import type { JourneyFeed } from '../../services/journey-feed.ts';
import type { RunControl } from '../../services/run-control.ts';
import type { StreamSlots } from '../../services/stream-slots.ts';
import type { RunCursor, RunFilters, RunRow } from '../../services/runs.ts';
import { admitModel } from '../../domain/models.ts';
import { progressOfRun } from '../../services/run-progress.ts';
import { ErrorObject, shouldRetryHeader, limitQuery } from '../contract/common.ts';
import { decodeCursor, encodeCursor } from '../contract/cursor.ts';
import { NDJSON_FAILURE_NOTE, ndjsonExport } from '../contract/ndjson.ts';
import { defineRoute } from '../contract/route.ts';
import { ApprovalPreview, ApprovalPreviewBody, ApprovalRequestBody, CreateRunRequest, Run, RunList, RunListQuery } from '../schemas/run.ts';
import { LastEventIdHeaders, RunEvent, runEventStream, streamEnded204, streamHeaders, wantsEventStream } from './agent-run-events.ts';
import type { JourneyLister } from './journey-events.ts';

/** An optional Idempotency-Key header: 1 to 255 visible ASCII characters; `description` says what it makes idempotent. */
const idempotencyKeyHeader = (description: string) =>
  z.object({
    'idempotency-key': z
      .string()
      .regex(/^[\x21-\x7e]{1,255}$/, 'must be 1 to 255 visible ASCII characters')
      .optional()
      .meta({ description }),
  });
const IdempotencyHeaders = idempotencyKeyHeader(
  'Makes creation idempotent for this tenant: the same key with the same body returns the same run (200) and creates nothing; with another body, 422. Keys are kept with their run (at least 24 h).',
);
const ApprovalIdempotencyHeaders = idempotencyKeyHeader(
  'Makes the decision idempotent for this run: retries with the same key and body apply and record it once and answer as the first did (200), also after the run ended; with another body, 422 and nothing is recorded. Send one, so a 503 can be retried safely.',
);
/** The 400 of the routes that take an Idempotency-Key. */
const invalidWithIdempotencyKey = {
  description:
    'Invalid request: malformed JSON, an unsupported parameter or a contract violation (`param` names the field); an Idempotency-Key that is not 1 to 255 visible ASCII characters is code invalid_idempotency_key (param Idempotency-Key).',
  schema: ErrorObject,
};
const RunParams = z.object({ run_id: z.string().min(1).max(64) });
const EXPORT_PAGE = 200;

function baseUrl(ctx: Koa.Context, configured?: string): string {
  return configured ?? `${ctx.protocol}://${ctx.host}`;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function runView(row: RunRow, base: string) {
  return {
    object: 'agent_run' as const,
    run_id: row.id,
    status_url: `${base}/v1/agent-runs/${row.id}`,
    status: row.status,
    current_step: row.currentStep,
    progress: progressOfRun(row),
    input: row.input,
    memory: row.memory,
    model: row.model,
    idempotency_key: row.idempotencyKey,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    completed_at: iso(row.completedAt),
    estimate: row.estimate ?? null,
    reservation: row.reservation ?? null,
    usage: row.usage ?? null,
    plan: row.plan ?? null,
    approval: row.approval ?? null,
    result: row.result ?? null,
    receipt: row.receipt ?? null,
    failure: row.failure ?? null,
  };
}

function filtersOf(q: z.output<typeof RunListQuery>): RunFilters {
  return {
    status: q.status,
    createdAfter: q.created_after ? new Date(q.created_after) : undefined,
    createdBefore: q.created_before ? new Date(q.created_before) : undefined,
    q: q.q,
  };
}

export function agentRunRoutes(deps: {
  runs: RunControl;
  publicBaseUrl?: string;
  listJourneyEvents: JourneyLister;
  chatKeepAliveMs: number;
  journeyFeed?: JourneyFeed;
  streamSlots: StreamSlots;
}) {
  const tags = ['runs'];
  const followRun = runEventStream({
    runs: deps.runs,
    listJourneyEvents: deps.listJourneyEvents,
    keepAliveMs: deps.chatKeepAliveMs,
    slots: deps.streamSlots,
    ...(deps.journeyFeed ? { changes: deps.journeyFeed } : {}),
  });
  const optionalStreamHeaders = Object.fromEntries(Object.entries(streamHeaders).map(([name, h]) => [name, h.optional()]));
  const notFound = { description: 'No run with this id for your tenant.', schema: ErrorObject };
  return [
    defineRoute({
      method: 'post',
      path: '/v1/agent-runs',
      operationId: 'createAgentRun',
      summary: 'Create a durable run',
      description:
        "Starts one Temporal workflow for the run: estimate, reserve, plan, approval (when the plan has external effects), execute, verify, settle. Poll `status_url`. With the local provider the run analyses the given text; with an upstream model (the tenant's routing policy for `model`) it is an agent loop: the model plans against the service's plan schema, a person approves external effects, and each model turn and tool call is an activity. The receipt never claims more than was performed and checked; anything else is in `receipt.unresolved` and the run ends needs_attention.",
      tags,
      auth: 'core',
      request: { body: CreateRunRequest, headers: IdempotencyHeaders },
      responses: {
        201: { description: 'A new run.', schema: Run },
        200: { description: 'The run this Idempotency-Key already created (same body); nothing new was created.', schema: Run },
        400: invalidWithIdempotencyKey,
        404: { description: 'Unknown model id (code model_not_found).', schema: ErrorObject },
        409: {
          description:
            "The tenant's routing policy sends the model to a provider this deployment has not configured (code model_not_routable, param model); no run was stored. Not retryable (`x-should-retry: false`). A run admitted before the provider went away stops needs_attention (failure.code model_unavailable) before its first model call.",
          schema: ErrorObject,
          headers: { 'x-should-retry': shouldRetryHeader },
        },
        422: { description: 'The Idempotency-Key was used with a different body (code idempotency_key_reused).', schema: ErrorObject },
        503: {
          description:
            'The database is unavailable, or Temporal is unreachable or did not start the run within 5 s (code service_unavailable). With an Idempotency-Key, retry with the same key: the stored run is started, never twice. Without one, the run is kept as failed (failure.code start_failed).',
          schema: ErrorObject,
        },
      },
      async handler({ principal, body, headers, ctx }) {
        const key = headers['idempotency-key'] ?? null;
        const { created, run } = await deps.runs.create(principal!.tenantId, key, { ...body, model: admitModel(body.model) });
        return { status: created ? 201 : 200, body: runView(run, baseUrl(ctx, deps.publicBaseUrl)) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/agent-runs',
      operationId: 'listAgentRuns',
      summary: 'Your run history',
      description: 'Newest first, with filters and cursor pagination.',
      tags,
      auth: 'reader',
      request: {
        query: RunListQuery.extend({
          limit: limitQuery(100, 20),
          cursor: z.string().max(512).optional(),
        }),
      },
      responses: { 200: { description: 'One page of runs.', schema: RunList } },
      async handler({ principal, query, ctx }) {
        const page = await deps.runs.list(principal!.tenantId, filtersOf(query), {
          limit: query.limit,
          after: query.cursor ? decodeCursor(query.cursor) : undefined,
        });
        const base = baseUrl(ctx, deps.publicBaseUrl);
        return {
          status: 200,
          body: {
            object: 'list',
            data: page.rows.map((r) => runView(r, base)),
            has_more: page.next !== null,
            next_cursor: page.next ? encodeCursor(page.next) : null,
          },
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/agent-runs/export',
      operationId: 'exportAgentRuns',
      summary: 'Export your run history as NDJSON',
      description: `Streams every matching run, one AgentRun JSON object per line, newest first. Same filters as the list. ${NDJSON_FAILURE_NOTE}`,
      tags,
      auth: 'core',
      request: { query: RunListQuery },
      responses: { 200: { description: 'application/x-ndjson stream of AgentRun objects.', contentType: 'application/x-ndjson' } },
      handler({ principal, query, ctx }) {
        const filters = filtersOf(query);
        const base = baseUrl(ctx, deps.publicBaseUrl);
        return ndjsonExport(
          ctx,
          (after: RunCursor | undefined) => deps.runs.list(principal!.tenantId, filters, { limit: EXPORT_PAGE, after }),
          (row: RunRow) => runView(row, base),
          'agent-runs.ndjson',
        );
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/agent-runs/{run_id}',
      operationId: 'getAgentRun',
      summary: 'A run with its state and completion receipt',
      tags,
      auth: 'reader',
      description: `With \`Accept: text/event-stream\` (as EventSource sends) the answer is the run's event stream, exactly as GET /v1/agent-runs/{run_id}/events answers it (extension); otherwise the run as JSON.`,
      request: { params: RunParams, headers: LastEventIdHeaders },
      responses: {
        200: {
          description: 'The run (application/json), or its event stream (text/event-stream of RunEvent `data:`) for `Accept: text/event-stream`.',
          schema: Run,
          alternatives: [{ contentType: 'text/event-stream', eventData: RunEvent }],
          headers: { Vary: z.literal('Accept').meta({ description: 'The answer depends on Accept.' }), ...optionalStreamHeaders },
        },
        204: streamEnded204,
        404: notFound,
      },
      // Not async: the read's own promise is the answer's (the most frequent request: docs/performance.md).
      handler({ principal, params, headers, ctx }) {
        ctx.vary('Accept');
        if (wantsEventStream(ctx)) return followRun(ctx, principal!.tenantId, principal!.keyId, params.run_id, headers['last-event-id']);
        return deps.runs
          .get(principal!.tenantId, params.run_id)
          .then((run) => ({ status: 200 as const, body: runView(run, baseUrl(ctx, deps.publicBaseUrl)) }));
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/agent-runs/{run_id}/approval',
      operationId: 'decideAgentRunApproval',
      summary: 'Approve or reject the external effects of a run',
      description:
        'Takes an approver key (extension): the decision is recorded as that key and its person, never as anything the body says, and a core or workspace key is refused (401) whoever holds it. ' +
        'Delivered to the workflow as a Temporal Update whose validator refuses it unless the run is awaiting approval (409); the answer waits until the workflow has applied the decision. Each effect goes ahead once it has the approvals its policy requires (1 unless an approval policy says more; `approval.approvals_needed` says how many are still needed); a rejection by any approver rejects the round. Each applied decision writes one audit event (`run.approval.approve` or `run.approval.reject`) under the approver key. ' +
        'With an Idempotency-Key the Update id is derived from the approver key and the Idempotency-Key, so Temporal applies a retried decision once and its audit event is written once; a retry with the same key and body answers 200 with the run as it is now, also after the run ended; the same key with another decision or reason answers 422 (idempotency_key_reused) and records nothing. ' +
        'Deadline: when Temporal is unreachable the answer is 503 service_unavailable (with Retry-After) at once, and when the workflow does not apply the decision within 5 s (no worker running) it is 503 after 5 s; never a hang and never a 202: nothing was confirmed and no audit event was written, but an Update Temporal had already received may still be applied when a worker returns. Retry with the same Idempotency-Key: it answers 200 if that decision was applied meanwhile, delivers it otherwise, and never applies or records it twice. ' +
        'Operators can send the same decision as the `approval` signal.',
      tags,
      auth: 'approver',
      request: { params: RunParams, body: ApprovalRequestBody, headers: ApprovalIdempotencyHeaders },
      responses: {
        200: { description: 'Decision applied (or, for a repeated Idempotency-Key, applied before); the run as it is now.', schema: Run },
        400: invalidWithIdempotencyKey,
        404: notFound,
        401: {
          description:
            'Not an active approver key of this tenant (code invalid_api_key): a core or workspace key never decides, whoever holds it. Nothing is recorded and the run keeps waiting.',
          schema: ErrorObject,
        },
        403: {
          description:
            'Extension: the approval policy names its allowed approvers and this approver key is not one of them, for every pending effect or for an effect it edits (code approver_not_allowed); nothing was recorded. A rejection is accepted from any approver.',
          schema: ErrorObject,
        },
        409: {
          description:
            'The run is not awaiting approval (code run_not_awaiting_approval); this approver already approved every pending effect (code already_approved, extension: an approval counts once per approver); or a digest is stale, or none is named after another decision edited an effect (code approval_stale). Nothing was recorded.',
          schema: ErrorObject,
        },
        422: {
          description: 'The Idempotency-Key was already used on this run with another decision or reason (code idempotency_key_reused); nothing was recorded.',
          schema: ErrorObject,
        },
        503: {
          description:
            'The decision was not confirmed: Temporal is unreachable, no worker applied it within 5 s, or the database is unavailable (code service_unavailable). Nothing was recorded; it may still take effect when workers return. Retry with bounded backoff and the same Idempotency-Key.',
          schema: ErrorObject,
        },
      },
      async handler({ principal, params, body, headers, ctx }) {
        // Who decides is who the API authenticated: the approver key's id and its person's name.
        const approver = { keyId: principal!.keyId, name: principal!.name ?? principal!.keyId };
        const run = await deps.runs.decide(principal!.tenantId, params.run_id, body, headers['idempotency-key'] ?? null, approver);
        return { status: 200, body: runView(run, baseUrl(ctx, deps.publicBaseUrl)) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/agent-runs/{run_id}/approval/preview',
      operationId: 'previewAgentRunApproval',
      summary: 'Check edited arguments and see their digests before approving (extension)',
      description:
        "Checks `edits` exactly as an approval carrying them would (against each tool's input schema; 400 naming the field) and answers the effects awaiting approval as they would then be, with the new `args_digest` of each edited one. Records, sends and decides nothing: approve with the same `edits` (and these digests in `digests`) to apply them. The inbox shows this before an operator confirms an edit.",
      tags,
      auth: 'reader',
      request: { params: RunParams, body: ApprovalPreviewBody },
      responses: {
        200: { description: 'The effects as the edits would leave them.', schema: ApprovalPreview },
        400: { description: 'Invalid edits (code invalid_request; `param` names the field).', schema: ErrorObject },
        404: notFound,
        409: { description: 'The run is not awaiting approval (code run_not_awaiting_approval).', schema: ErrorObject },
      },
      async handler({ principal, params, body }) {
        const effects = await deps.runs.previewEdits(principal!.tenantId, params.run_id, body.edits);
        return { status: 200, body: { object: 'approval_preview' as const, run_id: params.run_id, effects } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/agent-runs/{run_id}/cancel',
      operationId: 'cancelAgentRun',
      summary: 'Cancel a run',
      description:
        'Requests cancellation: the workflow stops, releases the whole hold and ends failed with failure.code cancelled. Poll status_url. The request is recorded by Temporal, so it is accepted (202) while workers are down and takes effect when they return; if Temporal is unreachable or does not confirm it within 5 s, 503.',
      tags,
      auth: 'core',
      request: { params: RunParams },
      responses: {
        202: { description: 'Cancellation requested.', schema: Run },
        404: notFound,
        409: { description: 'The run already ended (code run_already_terminal).', schema: ErrorObject },
        503: {
          description:
            'The database is unavailable, or Temporal is unreachable or did not confirm the cancellation within 5 s (code service_unavailable). Retry with bounded backoff.',
          schema: ErrorObject,
        },
      },
      async handler({ principal, params, ctx }) {
        const run = await deps.runs.cancel(principal!.tenantId, params.run_id);
        return { status: 202, body: runView(run, baseUrl(ctx, deps.publicBaseUrl)) };
      },
    }),
  ];
}
