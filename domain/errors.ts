// Errors are values with stable codes, created only here. The HTTP layer turns
// an ApiError into the contract's error object (svc.public-api.errors.v1);
// anything that is not an ApiError becomes an opaque 500.

export const ERROR_CONTRACT_ID = 'svc.public-api.errors.v1';

/** The `error.type` values on the wire. */
export type ErrorType = 'invalid_request_error' | 'authentication_error' | 'not_found' | 'rate_limited' | 'server_error';

/** Every stable `error.code` this service emits. */
export const ERROR_CODES = [
  'invalid_json',
  'invalid_request',
  'unsupported_parameter',
  'consent_required',
  'payload_too_large',
  'unsupported_media_type',
  'invalid_api_key',
  'invalid_idempotency_key',
  'idempotency_key_reused',
  'invalid_cursor',
  'run_not_awaiting_approval',
  'approval_stale',
  'already_approved',
  'approver_not_allowed',
  'unknown_approver',
  'run_already_terminal',
  'vault_entry_forgotten',
  'model_not_found',
  'model_not_routable',
  'tools_not_supported',
  'provider_not_configured',
  'credential_value_refused',
  'trace_content_refused',
  'budget_exceeded',
  'sandbox_jobs_disabled',
  'sandbox_runner_not_configured',
  'not_conformant',
  'patch_candidate_unavailable',
  'insufficient_credits',
  'upstream_unavailable',
  'vault_entry_not_quarantined',
  'webhook_endpoint_limit_reached',
  'not_found',
  'method_not_allowed',
  'rate_limit_exceeded',
  'internal_error',
  'service_unavailable',
  'export_interrupted',
  'request_header_too_large',
  'malformed_request',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

/**
 * Sent as `x-should-retry: false` on errors that waiting cannot clear (a 429 for credits or a
 * budget, a 409 for an unroutable model): the official OpenAI clients obey it and do not retry.
 */
export const DO_NOT_RETRY = { 'x-should-retry': 'false' } as const;

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: ErrorType,
    readonly code: ErrorCode,
    message: string,
    readonly param: string | null = null,
    /** Extra response headers, e.g. Retry-After. */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** The 503 of a process still starting (runtime/startup.ts): expected, so no outage is counted for it (services/outage-log.ts). */
export class StartingError extends ApiError {}

export const errors = {
  invalidJson: () => new ApiError(400, 'invalid_request_error', 'invalid_json', 'The request body is not valid JSON.'),
  invalidRequest: (message: string, param: string | null) => new ApiError(400, 'invalid_request_error', 'invalid_request', message, param),
  unsupportedParameter: (param: string) => new ApiError(400, 'invalid_request_error', 'unsupported_parameter', `Unsupported parameter: '${param}'.`, param),
  consentRequired: () =>
    new ApiError(
      400,
      'invalid_request_error',
      'consent_required',
      'consent_to_process must be true before the objective can be processed.',
      'consent_to_process',
    ),
  payloadTooLarge: (limitBytes: number) =>
    new ApiError(413, 'invalid_request_error', 'payload_too_large', `The request body exceeds the limit of ${limitBytes} bytes.`),
  unsupportedMediaType: () =>
    new ApiError(
      415,
      'invalid_request_error',
      'unsupported_media_type',
      'The request body must be sent as application/json in UTF-8 (Content-Type: application/json, with no charset or charset=utf-8).',
    ),
  /** `needed`: the key kinds the route takes, as words ("an approver key (gws_apv_…)"), the same whatever was sent. */
  invalidApiKey: (needed = 'a key for this route') =>
    new ApiError(401, 'authentication_error', 'invalid_api_key', `A valid API key is required: send Authorization: Bearer <API_KEY> with ${needed}.`),
  notFound: (message = 'No such route.') => new ApiError(404, 'not_found', 'not_found', message),
  methodNotAllowed: () => new ApiError(405, 'invalid_request_error', 'method_not_allowed', 'This method is not allowed on this route; see the Allow header.'),
  rateLimited: (retryAfterSeconds: number) =>
    new ApiError(429, 'rate_limited', 'rate_limit_exceeded', 'Rate limit exceeded: reduce the request rate and retry after the Retry-After interval.', null, {
      'Retry-After': String(retryAfterSeconds),
    }),
  invalidIdempotencyKey: () =>
    new ApiError(400, 'invalid_request_error', 'invalid_idempotency_key', 'Idempotency-Key must be 1 to 255 visible ASCII characters.', 'Idempotency-Key'),
  idempotencyKeyReused: () =>
    new ApiError(
      422,
      'invalid_request_error',
      'idempotency_key_reused',
      'This Idempotency-Key was already used with a different request body. Use a new key for a new run.',
      'Idempotency-Key',
    ),
  approvalKeyReused: () =>
    new ApiError(
      422,
      'invalid_request_error',
      'idempotency_key_reused',
      'This Idempotency-Key was already used on this run with a different decision or reason; nothing was recorded.',
      'Idempotency-Key',
    ),
  invalidCursor: () => new ApiError(400, 'invalid_request_error', 'invalid_cursor', 'The cursor is not one this API returned.', 'cursor'),
  runNotAwaitingApproval: (status: string) =>
    new ApiError(409, 'invalid_request_error', 'run_not_awaiting_approval', `The run is ${status}, not awaiting approval; no decision was recorded.`),
  approvalStale: (digest: string) =>
    new ApiError(
      409,
      'invalid_request_error',
      'approval_stale',
      `The decision names argument digest ${digest}, which no effect awaiting approval has (the plan changed); no decision was recorded. Read the run again and decide on what it shows.`,
      'digests',
    ),
  approvalUnbound: () =>
    new ApiError(
      409,
      'invalid_request_error',
      'approval_stale',
      'An effect awaiting approval was edited by another decision since it was proposed: read the run again and approve naming the digests you approve (`digests`); no decision was recorded.',
      'digests',
    ),
  alreadyApproved: () =>
    new ApiError(
      409,
      'invalid_request_error',
      'already_approved',
      'This approver key already approved every effect awaiting approval; an approval counts once per approver, so nothing was recorded. Another approver must approve.',
    ),
  approverNotAllowed: () =>
    new ApiError(
      403,
      'invalid_request_error',
      'approver_not_allowed',
      'The approval policy of every effect awaiting approval names its allowed approvers, and this approver key is not one of them; nothing was recorded. A rejection is accepted from any approver.',
    ),
  unknownApprover: (param: string) =>
    new ApiError(400, 'invalid_request_error', 'unknown_approver', 'Every allowed approver must be an active approver key of this tenant.', param),
  approvalEditInvalid: (param: string, why: string) => new ApiError(400, 'invalid_request_error', 'invalid_request', `Invalid ${param}: ${why}`, param),
  runAlreadyTerminal: (status: string) =>
    new ApiError(409, 'invalid_request_error', 'run_already_terminal', `The run already ended (${status}); nothing to cancel.`),
  entryForgotten: () => new ApiError(409, 'invalid_request_error', 'vault_entry_forgotten', 'The entry was forgotten; only its tombstone remains.'),
  entryNotQuarantined: () =>
    new ApiError(409, 'invalid_request_error', 'vault_entry_not_quarantined', 'The entry is not quarantined, so there is nothing to release.'),
  /** The tenant's routing policy names a provider this deployment has not configured (the configuration changed after the policy was written). */
  modelNotRoutable: (model: string) =>
    new ApiError(
      409,
      'invalid_request_error',
      'model_not_routable',
      `This tenant's routing policy sends '${model}' to a provider this deployment has not configured, so nothing was sent to a model and nothing was charged. Do not retry: change the policy (POST /v1/routing-policies) or ask the operator to configure the provider (see GET /v1/providers).`,
      'model',
      { ...DO_NOT_RETRY },
    ),
  /** Chat `tools` (with a tool_choice other than "none") for a model the tenant's routing sends to a provider that cannot call tools; nothing is held or sent. */
  toolsNotSupported: (model: string) =>
    new ApiError(
      400,
      'invalid_request_error',
      'tools_not_supported',
      `The model '${model}' cannot call tools for this tenant: its routing sends it to the local provider, which answers in text only. Nothing was sent to a model and nothing was charged. To use tools, route the model to an upstream provider (POST /v1/routing-policies with {"model": "${model}", "provider": "upstream"}; GET /v1/providers shows whether one is configured); for a text answer, send tool_choice "none" or leave tools out.`,
      'tools',
    ),
  /** A routing policy naming a provider this deployment has not configured; nothing is recorded. */
  providerNotConfigured: (provider: string) =>
    new ApiError(
      400,
      'invalid_request_error',
      'provider_not_configured',
      `The provider '${provider}' is not configured on this deployment (see GET /v1/providers), so a policy naming it would leave the model unroutable; nothing was recorded.`,
      'provider',
    ),
  // The id the caller sent is not echoed: `param` names the field, GET /v1/models lists what exists.
  modelNotFound: () => new ApiError(404, 'not_found', 'model_not_found', 'No such model; see GET /v1/models.', 'model'),
  /** Not retryable: no Retry-After, and `x-should-retry: false`; it clears only when an operator grants credits. */
  insufficientCredits: () =>
    new ApiError(
      429,
      'rate_limited',
      'insufficient_credits',
      'The available credits cannot cover this request. Do not retry: ask your operator to grant credits.',
      null,
      { ...DO_NOT_RETRY },
    ),
  providerRateLimited: (retryAfterSeconds: number) =>
    new ApiError(429, 'rate_limited', 'rate_limit_exceeded', 'Rate limit exceeded: retry after the Retry-After interval.', null, {
      'Retry-After': String(retryAfterSeconds),
    }),
  providerUnavailable: () =>
    new ApiError(502, 'server_error', 'upstream_unavailable', 'The model service is temporarily unavailable. Retry with bounded backoff.'),
  credentialValueRefused: (param: string) =>
    new ApiError(
      400,
      'invalid_request_error',
      'credential_value_refused',
      'This looks like a credential value. Send a reference to where the credential lives (env:NAME or secret://path), never the value; nothing was stored.',
      param,
    ),
  traceContentRefused: (param: string) =>
    new ApiError(
      400,
      'invalid_request_error',
      'trace_content_refused',
      'Traces keep metadata only: prompt, response and other content fields are refused.',
      param,
    ),
  /** Not retryable: no Retry-After, and `x-should-retry: false`; it clears when the budget's period turns or the policy changes. */
  budgetExceeded: () =>
    new ApiError(
      429,
      'rate_limited',
      'budget_exceeded',
      'A budget policy of this tenant does not leave room for this request. Do not retry: raise the budget (POST /v1/budgets) or wait for its next period.',
      null,
      { ...DO_NOT_RETRY },
    ),
  sandboxRunnerNotConfigured: () =>
    new ApiError(
      403,
      'invalid_request_error',
      'sandbox_runner_not_configured',
      'Sandbox jobs are enabled, but no sandbox runner is configured on this deployment, so nothing could run the job; it was not admitted or stored.',
    ),
  sandboxJobsDisabled: () =>
    new ApiError(403, 'invalid_request_error', 'sandbox_jobs_disabled', 'Sandbox jobs are not admitted: the second phase is not enabled on this deployment.'),
  notConformant: (message: string, param: string) => new ApiError(400, 'invalid_request_error', 'not_conformant', message, param),
  patchCandidateUnavailable: () =>
    new ApiError(503, 'server_error', 'patch_candidate_unavailable', 'Patch candidates are not accepted on this deployment right now.', null, {
      'Retry-After': '60',
    }),
  webhookEndpointLimitReached: (max: number) =>
    new ApiError(
      409,
      'invalid_request_error',
      'webhook_endpoint_limit_reached',
      `This tenant already has ${max} webhook endpoints, the most it may have; nothing was created. Delete one (DELETE /v1/webhook-endpoints/{endpoint_id}) first.`,
      null,
      { ...DO_NOT_RETRY },
    ),
  internal: () => new ApiError(500, 'server_error', 'internal_error', 'The server hit an unexpected error. Retry with bounded backoff.'),
  /** Refused by the HTTP parser, before any route ran (api/server.ts). */
  requestHeaderTooLarge: () =>
    new ApiError(
      431,
      'invalid_request_error',
      'request_header_too_large',
      'The request line or header block is larger than the server reads; nothing was processed.',
    ),
  malformedRequest: () => new ApiError(400, 'invalid_request_error', 'malformed_request', 'The HTTP request could not be parsed; nothing was processed.'),
  /** The last line of an NDJSON export that failed part-way (the 200 was already sent). */
  exportInterrupted: () =>
    new ApiError(500, 'server_error', 'export_interrupted', 'The export stopped before its end; the lines before this one are complete. Retry the export.'),
  unavailable: (message = 'The service is temporarily unavailable. Retry with bounded backoff.') =>
    new ApiError(503, 'server_error', 'service_unavailable', message, null, { 'Retry-After': '5' }),
  /** Start-up has not finished (runtime/startup.ts): `step` is what it is doing, or waiting for. The same 503 as `unavailable`. */
  starting: (step: string) =>
    new StartingError(503, 'server_error', 'service_unavailable', `Service unavailable: starting (${step}).`, null, { 'Retry-After': '5' }),
  /** Temporal is unreachable or did not confirm a run's start or cancellation within the API's deadline. */
  workflowServiceUnavailable: (action: 'start' | 'cancel', deadlineSeconds: number) =>
    new ApiError(
      503,
      'server_error',
      'service_unavailable',
      action === 'start'
        ? `The run's workflow could not be started: the workflow service is unreachable or did not answer within ${deadlineSeconds} s. Retry with bounded backoff and the same Idempotency-Key; it never starts the run twice.`
        : `The cancellation was not confirmed: the workflow service is unreachable or did not answer within ${deadlineSeconds} s. Retry with bounded backoff.`,
      null,
      { 'Retry-After': '5' },
    ),
  /** An approval decision that Temporal or the run's workflow did not confirm within the API's deadline (workflow service or workers down). */
  decisionNotConfirmed: (deadlineSeconds: number) =>
    new ApiError(
      503,
      'server_error',
      'service_unavailable',
      `The decision was not confirmed: the workflow service is unreachable, or the run's workflow did not apply it within ${deadlineSeconds} s (no worker running). It may still take effect once Temporal and its workers are back. Retry with bounded backoff and the same Idempotency-Key: the retry answers as the decision did, and it is never applied or recorded twice.`,
      null,
      { 'Retry-After': '5' },
    ),
  /**
   * The run's record says it awaits approval but its workflow cannot take the decision yet: a worker
   * that died as the run reached approval is being replaced and is replaying, or the workflow's last
   * task failed or timed out (an overloaded worker) and Temporal is retrying it. Retrying shortly applies it.
   */
  approvalNotSettled: () =>
    new ApiError(
      503,
      'server_error',
      'service_unavailable',
      'The run awaits approval, but its workflow could not take the decision yet (it is catching up after a worker restart, or retrying its last step); nothing was recorded. Retry shortly with the same Idempotency-Key.',
      null,
      { 'Retry-After': '1' },
    ),
  /** A key holds its share of the process's event streams (STREAMS_PER_KEY): one must close first. */
  tooManyStreamsForKey: (limit: number) =>
    new ApiError(
      429,
      'rate_limited',
      'rate_limit_exceeded',
      `This key already has ${limit} event streams open on this server, the most it may; close one, or retry after the Retry-After interval.`,
      null,
      { 'Retry-After': '5' },
    ),
  /** The process serves as many event streams as it may (STREAMS_PER_PROCESS): another replica, or later. */
  tooManyStreams: () =>
    new ApiError(
      503,
      'server_error',
      'service_unavailable',
      'This server has as many event streams open as it serves; retry after the Retry-After interval.',
      null,
      {
        'Retry-After': '5',
      },
    ),
} as const;

/** The error object of the contract. */
export interface ErrorBody {
  error: { message: string; type: ErrorType; param: string | null; code: ErrorCode; request_id: string };
}

export function toErrorBody(err: ApiError, requestId: string): ErrorBody {
  return { error: { message: err.message, type: err.type, param: err.param, code: err.code, request_id: requestId } };
}
