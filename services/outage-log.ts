// A dependency going down and coming back, logged once each. While Postgres or
// Temporal is down every request that needs it is answered 503, as it should
// be; logging each of those at error level buried the one line that matters
// under thousands (2,735 per replica in a two-minute outage). The per-request
// 503s now log at debug, and this logs the outage itself: which dependency the
// health probes find down, when the first request was refused, and, once the
// probes find it back, how long it lasted and how many requests were refused.
import type { Logger } from 'pino';
import type { HealthCheck, HealthReport } from './health.ts';

type Dependency = keyof HealthReport;

interface Outage {
  since: number;
  refused: number;
}

export interface OutageLog {
  /** A request was answered 503 because a dependency is unreachable. */
  refused(): void;
  /** Stops probing (the process is stopping). */
  stop(): void;
}

/** How often a dependency found down is probed until it answers. */
export const OUTAGE_PROBE_MS = 1_000;

export function outageLog(logger: Logger, checkHealth: HealthCheck, probeMs = OUTAGE_PROBE_MS): OutageLog {
  const down = new Map<Dependency, Outage>();
  /** Refusals while no probe has yet said which dependency is down. */
  let unattributed = 0;
  let timer: NodeJS.Timeout | undefined;
  let probing = false;

  async function probe(): Promise<void> {
    if (probing) return;
    probing = true;
    try {
      const report = await checkHealth();
      const now = Date.now();
      for (const dependency of Object.keys(report) as Dependency[]) {
        const outage = down.get(dependency);
        if (report[dependency] !== 'ok' && !outage) {
          down.set(dependency, { since: now, refused: unattributed });
          logger.error({ dependency }, 'dependency down: requests that need it are answered 503 until it is back');
        } else if (report[dependency] === 'ok' && outage) {
          down.delete(dependency);
          logger.warn({ dependency, down_ms: now - outage.since, refused: outage.refused }, 'dependency back');
        }
      }
      unattributed = 0;
      if (down.size === 0 && timer) {
        clearInterval(timer);
        timer = undefined;
      }
    } catch {
      // The health check itself failed: the next tick tries again.
    } finally {
      probing = false;
    }
  }

  return {
    refused() {
      if (down.size === 0) unattributed += 1;
      for (const outage of down.values()) outage.refused += 1;
      if (!timer) {
        timer = setInterval(() => void probe(), probeMs).unref();
        void probe();
      }
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
    },
  };
}
