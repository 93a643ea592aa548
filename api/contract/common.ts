// Schemas shared by many routes: the error object and the standard headers.
import { z } from 'zod';
import { ERROR_CODES } from '../../domain/errors.ts';

export const ErrorObject = z
  .object({
    error: z.object({
      message: z.string().meta({ description: 'Human-readable summary.' }),
      type: z
        .enum(['invalid_request_error', 'authentication_error', 'not_found', 'rate_limited', 'server_error'])
        .meta({ description: 'Error class. 400/405/413/415: invalid_request_error; 401: authentication_error; 404: not_found; 429: rate_limited; 5xx: server_error.' }),
      param: z.string().nullable().meta({ description: 'The offending parameter (a dotted path into the body, or a query/path parameter name), or null.' }),
      code: z.enum(ERROR_CODES).meta({ description: 'Stable machine-readable code.' }),
      request_id: z.string().meta({ description: 'Value of the x-request-id response header.' }),
    }),
  })
  .meta({
    id: 'ErrorObject',
    description: 'Error contract svc.public-api.errors.v1. Log the x-request-id header with it.',
  });

export const requestIdHeader = z.string().meta({
  description: 'Request id: the caller\'s x-request-id when it is 1-128 characters of [A-Za-z0-9._:-], else a generated one.',
});
export const retryAfterHeader = z.string().meta({ description: 'Seconds to wait before retrying.' });
export const rateLimitHeader = z.string().meta({
  description: 'IETF RateLimit header: remaining quota `r` and seconds `t` until the window resets, e.g. `"per-key";r=599;t=42`.',
});
export const rateLimitPolicyHeader = z.string().meta({
  description: 'IETF RateLimit-Policy header: quota `q` per window `w` seconds, e.g. `"per-key";q=600;w=60`.',
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
