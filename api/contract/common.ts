// Schemas shared by many routes: the error object and the standard headers.
import { z } from 'zod';
import { ERROR_CODES } from '../../domain/errors.ts';

export const ErrorObject = z
  .object({
    error: z.object({
      message: z.string().meta({ description: 'Human-readable summary.' }),
      type: z.enum(['invalid_request_error', 'authentication_error', 'not_found', 'rate_limited', 'server_error']).meta({
        description:
          'Error class. 400/403/405/409/413/415/422: invalid_request_error; 401: authentication_error; 404: not_found; 429: rate_limited; 5xx: server_error.',
      }),
      param: z.string().nullable().meta({ description: 'The offending parameter (a dotted path into the body, or a query/path parameter name), or null.' }),
      code: z.enum(ERROR_CODES).meta({
        description:
          'Stable machine-readable code. Whether to retry follows the code, not only the status: a 429 rate_limit_exceeded clears with time (wait Retry-After seconds, then retry); a 429 insufficient_credits or budget_exceeded, and a 409 model_not_routable, do not (they carry `x-should-retry: false` and no Retry-After: retrying the same request cannot succeed until an operator or the tenant changes something).',
      }),
      request_id: z.string().meta({ description: 'Value of the x-request-id response header.' }),
    }),
  })
  .meta({
    id: 'ErrorObject',
    description: 'Error contract svc.public-api.errors.v1. Log the x-request-id header with it.',
  });

export const requestIdHeader = z.string().meta({
  description: "Request id: the caller's x-request-id when it is 1-128 characters of [A-Za-z0-9._:-], else a generated one.",
});
export const retryAfterHeader = z.string().meta({ description: 'Seconds to wait before retrying.' });
/** On a 429 that may be retryable or not (chat): present exactly on rate_limit_exceeded. */
export const retryAfterIfRetryableHeader = z.string().optional().meta({
  description:
    'Seconds to wait before retrying. Sent with code rate_limit_exceeded only; an insufficient_credits or budget_exceeded 429 has none (see x-should-retry).',
});
export const shouldRetryHeader = z.literal('false').meta({
  description:
    '`false`: waiting does not clear this condition, so do not retry the request unchanged. The official OpenAI clients read this header and then do not retry. Never sent as `true`; where it is absent, retry as the status and code say.',
});
const POLICIES =
  'The policy that applied: `per-key` on an authenticated request, `unauthenticated` (per client address) on a failed authentication, `trial` (per client address) on the public trial.';
export const rateLimitHeader = z.string().meta({
  description: `IETF RateLimit header: remaining quota \`r\` and seconds \`t\` until the window resets, e.g. \`"per-key";r=599;t=42\`. ${POLICIES}`,
});
export const rateLimitPolicyHeader = z.string().meta({
  description: `IETF RateLimit-Policy header: quota \`q\` per window \`w\` seconds, e.g. \`"per-key";q=600;w=60\`. ${POLICIES}`,
});

/** Years both JavaScript and Postgres represent without surprises; a date outside them is a 400, never a database error. */
const YEARS = { min: 1, max: 9999 };

export function withinYears(d: Date): boolean {
  const year = d.getUTCFullYear();
  return !Number.isNaN(year) && year >= YEARS.min && year <= YEARS.max;
}

/** An RFC 3339 date-time with an offset, in the years 0001 to 9999. */
export const DateTime = z.iso
  .datetime({ offset: true })
  .refine((v) => withinYears(new Date(v)), `must be between the years ${String(YEARS.min).padStart(4, '0')} and ${YEARS.max}`);

/** A DateTime in the future (expiry dates). */
export const FutureDateTime = DateTime.refine((v) => new Date(v).getTime() > Date.now(), 'must be in the future');

/** A query string holding only digits becomes its number; anything else (`+10`, `1e1`, ` 10`) stays text and is refused. */
const digitsToNumber = (value: unknown) => (typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : value);

/**
 * A `limit` query parameter: digits only, 1 to `max`, `fallback` when absent. Documented as an integer
 * (with its bounds and default), as before; Number() would have read `+10`, `1e1` and `0x10`.
 */
export function limitQuery(max: number, fallback: number) {
  return z.preprocess(
    digitsToNumber,
    z
      .int({ error: (issue) => (issue.code === 'invalid_type' ? 'must be a whole number written in digits' : undefined) })
      .min(1)
      .max(max)
      .default(fallback),
  );
}
