import { trace } from '@opentelemetry/api';
import { pino, type Logger } from 'pino';
import type { Config } from '../config/env.ts';

/**
 * Credentials are redacted defensively even though no code logs headers, bodies or secrets: the
 * request log writes only request_id, method, route, status and latency_ms, other lines ids,
 * counts and error classes (loggableError). Exact paths, no wildcards: a wildcard path makes
 * pino walk every logged object on every line (about 12% of the CPU of a trivial route). The
 * paths cover the top level and the objects that are logged (`temporal`: the SDK's log meta;
 * `err`, `headers`, `req.headers`), where a credential could plausibly appear.
 */
export const REDACT_PATHS = [
  'authorization',
  'Authorization',
  'secret',
  'headers.authorization',
  'headers.Authorization',
  'req.headers.authorization',
  'req.headers.Authorization',
  'err.authorization',
  'err.secret',
  'temporal.authorization',
  'temporal.Authorization',
  'temporal.secret',
];

/** The trace of what is logging, when tracing is on: each line's trace_id finds its trace, and the trace's spans its lines. */
function traceIds(): Record<string, string> {
  const span = trace.getActiveSpan();
  if (!span) return {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

/** JSON logs on stdout. */
export function createLogger(config: Pick<Config, 'logLevel'>, name = 'gws'): Logger {
  return pino({
    name,
    level: config.logLevel,
    mixin: traceIds,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
  });
}
