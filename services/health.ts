// Dependency health for GET /health: each probe gets a short deadline so a hung
// dependency reports "unavailable" instead of hanging the health check.

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

export function healthChecker(probes: { database: Probe; temporal: Probe }): () => Promise<HealthReport> {
  return async () => {
    const [database, temporal] = await Promise.all([stateOf(probes.database), stateOf(probes.temporal)]);
    return { database, temporal };
  };
}
