// Dependency health for GET /health: each probe gets a short deadline so a hung
// dependency reports "unavailable" instead of hanging the health check, and the
// result is cached in memory and refreshed in the background (healthChecker).

export type DependencyState = 'ok' | 'unavailable';
export interface HealthReport {
  database: DependencyState;
  temporal: DependencyState;
}

export type Probe = () => Promise<void>;

const PROBE_TIMEOUT_MS = 2_000;

async function stateOf(probe: Probe): Promise<DependencyState> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('probe timed out')), PROBE_TIMEOUT_MS);
  });
  try {
    await Promise.race([probe(), timeout]);
    return 'ok';
  } catch {
    return 'unavailable';
  } finally {
    clearTimeout(timer);
  }
}

/** How often the cached status is refreshed while /health is being asked, so what it reports is about this old at most. */
export const HEALTH_REFRESH_MS = 1_000;
/** With no /health request for this long, the background refresh stops (the next request probes afresh). */
const IDLE_STOP_MS = 30_000;

/** The current status: at once when the held one is fresh (most requests), else once the probe in flight answers. */
export type HealthCheck = () => HealthReport | Promise<HealthReport>;

/**
 * GET /health answers from a status held in memory, not by querying the database and calling
 * Temporal per request. While it is being asked, a background timer re-probes every
 * HEALTH_REFRESH_MS (one probe at a time; a request never starts a second one); a request that
 * finds the status older than that plus a little slack (the first, or the first after an idle
 * spell) waits for the in-flight probe instead, so a reported status is never much more than
 * ~1 s old and a dependency going down turns /health into a 503 within about a second.
 */
export function healthChecker(probes: { database: Probe; temporal: Probe }, options: { refreshMs?: number; idleStopMs?: number } = {}): HealthCheck {
  const refreshMs = options.refreshMs ?? HEALTH_REFRESH_MS;
  const idleStopMs = options.idleStopMs ?? IDLE_STOP_MS;
  let cached: { report: HealthReport; at: number } | undefined;
  let inFlight: Promise<HealthReport> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let lastAsked = 0;

  const refresh = (): Promise<HealthReport> =>
    (inFlight ??= (async () => {
      const at = Date.now();
      try {
        const [database, temporal] = await Promise.all([stateOf(probes.database), stateOf(probes.temporal)]);
        const report = { database, temporal };
        cached = { report, at };
        return report;
      } finally {
        inFlight = undefined;
      }
    })());

  const tick = () => {
    if (Date.now() - lastAsked > idleStopMs) {
      clearInterval(timer);
      timer = undefined;
      return;
    }
    void refresh();
  };

  return () => {
    lastAsked = Date.now();
    if (!timer) {
      timer = setInterval(tick, refreshMs);
      timer.unref(); // never keeps the process alive
    }
    // Slack for the probe's own latency between two timer refreshes.
    if (cached && Date.now() - cached.at <= refreshMs * 1.5) return cached.report;
    return refresh();
  };
}
