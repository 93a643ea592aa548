// Waits for a spawned API to finish starting: /health answers, and not 503 "starting (…)" (runtime/startup.ts).
// Its answer may still be a 503 for a dependency a test keeps down on purpose.
import { until } from './until.ts';

export async function untilStarted(url: string, withinMs = 60_000): Promise<void> {
  const started = async () => {
    const health = await fetch(`${url}/health`).catch(() => null);
    return health !== null && !(await health.text()).includes('starting');
  };
  await until(started, `${url} to finish starting`, { withinMs });
}
