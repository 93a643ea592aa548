// The errors `gws` reports: an API error object (its code and message on stderr), a server it cannot
// reach, or a usage problem. Each carries the exit code the process ends with.
import type { ErrorObject } from '../../client/index.ts';
import { EXIT } from './exit-codes.ts';

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.failed,
  ) {
    super(message);
  }
}

/** A non-2xx answer: the error object's code and message, the status and the request id. */
export class ApiError extends CliError {
  constructor(
    readonly status: number,
    readonly code: string,
    detail: string,
    readonly requestId: string | null,
  ) {
    super(`${code}: ${detail} (HTTP ${status}${requestId ? `, request ${requestId}` : ''})`);
  }
}

/** The ApiError of a response and its parsed body, whatever shape the body has. */
export function apiErrorOf(response: Response, body: unknown): ApiError {
  const error = (body as Partial<ErrorObject> | undefined)?.error;
  const requestId = response.headers.get('x-request-id');
  if (error && typeof error.code === 'string') return new ApiError(response.status, error.code, error.message ?? '', error.request_id ?? requestId);
  return new ApiError(response.status, `http_${response.status}`, response.statusText || 'unexpected answer', requestId);
}

/** An ApiError from a response whose body has not been read. */
export async function apiErrorOfResponse(response: Response): Promise<ApiError> {
  const text = await response.text().catch(() => '');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return apiErrorOf(response, body);
}

/** The data of an openapi-fetch result, or its error as an ApiError. */
export function unwrap<R extends { data?: unknown; error?: unknown; response: Response }>(result: R): NonNullable<R['data']> {
  if (result.error !== undefined || !result.response.ok) throw apiErrorOf(result.response, result.error);
  return result.data as NonNullable<R['data']>;
}

/** A fetch that failed before any answer (refused, DNS, TLS), as a CliError naming the address. */
export function unreachable(baseUrl: string, err: unknown): CliError {
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
  const why = cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
  return new CliError(`cannot reach ${baseUrl}: ${why}`);
}
