// Which failures mean "a dependency is unreachable" rather than "a bug": the
// API answers them 503 (api/middleware/error-handler.ts) and start-up waits
// them out (runtime/startup.ts). One definition, so both agree on what an
// outage is. Decided from codes and the error's class, never its message's
// content, except for node-postgres's own connection errors, which carry no code.

// Socket-level errnos (ENOTFOUND / EAI_AGAIN: a host name that does not resolve yet, as a database
// container's does while it starts) and the SQLSTATEs of a server going away, starting up or full.
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08001',
  '08003',
  '08006',
  '53300',
]);

// node-postgres and its pool: a connection cut mid-query, and no connection within connectionTimeoutMillis.
const PG_CONNECTION_LOST = /^(Connection terminated|timeout exceeded when trying to connect)/;

type Failure = { name?: string; code?: unknown; message?: string; cause?: unknown };

function isOutage(e: Failure): boolean {
  if (typeof e.code === 'string' && UNAVAILABLE_CODES.has(e.code)) return true;
  // gRPC UNAVAILABLE (14) and DEADLINE_EXCEEDED (4), bare or in the Temporal client's ServiceError.
  if (e.code === 14 || e.code === 4) return true;
  if ((e.name === 'ServiceError' || e.name === 'ConnectionError') && [undefined, 4, 14].includes((e.cause as { code?: number })?.code)) return true;
  // The worker's native connection (Temporal Core) failing to connect.
  if (e.name === 'TransportError') return true;
  return e.code === undefined && typeof e.message === 'string' && PG_CONNECTION_LOST.test(e.message);
}

/** True when `err`, or an error it wraps (`cause`, as Drizzle and the Temporal client wrap), says a dependency is unreachable. */
export function isDependencyOutage(err: unknown): boolean {
  let e = err;
  for (let depth = 0; depth < 4 && e !== null && typeof e === 'object'; depth++) {
    if (isOutage(e as Failure)) return true;
    e = (e as Failure).cause;
  }
  return false;
}
