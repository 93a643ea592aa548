// Start-up as a few steps, and whether it has finished ("ready means ready").
// An entry point (bin/) runs each step that needs the database or Temporal
// through waitFor: a dependency that is down, or drops, while the process starts
// is waited out with backoff instead of crashing it. The wait is logged once
// when it starts and once when the dependency is back, and it is bounded:
// after STARTUP_TIMEOUT_MS of waiting in all, start-up fails with an error that
// names the dependency (the entry point exits 1 with it).
// Until ready() the API answers 503 "starting (<step>)" (`pending`: /health and
// every route that needs a dependency), so a probe's first 200 means that
// migrations, the worker, the schedules and the dev keys are all in place.
import type { Logger } from 'pino';
import type { TemporalConnectionSettings } from '../config/temporal-connection-settings.ts';
import { isDependencyOutage } from '../services/dependency-outage.ts';

/** A dependency start-up can wait for: its name, the setting that says where it is and what to do about it (for the give-up message). */
export type Dependency = { name: string; setting: string; hint?: string };
export const DATABASE: Dependency = { name: 'the database', setting: 'DATABASE_URL' };
export const TEMPORAL: Dependency = { name: 'Temporal', setting: 'TEMPORAL_ADDRESS' };
/** Temporal, named by what set its address: TEMPORAL_ADDRESS, or the temporal.toml profile. */
export const temporalDependency = (connection: TemporalConnectionSettings): Dependency => ({ name: 'Temporal', setting: connection.source });

/** The first retry comes this soon; each next one twice as late, up to MAX_BACKOFF_MS. */
const FIRST_BACKOFF_MS = 250;
/** A dependency back is noticed within this long, once it had been down a while. */
const MAX_BACKOFF_MS = 5_000;

/** The worker's native connection to Temporal could not be made (connecting, or describing the namespace as the worker is created). */
export const notConnected = (err: unknown): boolean => (err as { name?: string } | null)?.name === 'TransportError';

/** Start-up gave up: a dependency stayed unreachable for STARTUP_TIMEOUT_MS in all. */
export class StartupTimeout extends Error {
  override readonly name = 'StartupTimeout';
}

export class StartUp {
  private step: string | undefined = 'getting ready';
  /** Time spent waiting for dependencies so far, over all steps. */
  private waitedMs = 0;
  private readonly startedAt = Date.now();

  constructor(
    private readonly logger: Logger,
    private readonly timeoutMs: number,
    private readonly backoff = { firstMs: FIRST_BACKOFF_MS, maxMs: MAX_BACKOFF_MS },
  ) {}

  /** What start-up is doing, or undefined once it has finished: the reason the API gives in its 503 meanwhile. */
  readonly pending = (): string | undefined => this.step;

  /** Start-up is at `step`, one that waits for no dependency (what /health says meanwhile). */
  at(step: string): void {
    this.step = step;
  }

  /** Start-up has finished: from now on the API answers as its dependencies allow. */
  ready(): void {
    this.step = undefined;
    this.logger.debug({ startup_ms: Date.now() - this.startedAt, waited_ms: this.waitedMs }, 'start-up finished');
  }

  /**
   * Runs `attempt` as the step `step`. While it fails because a dependency is unreachable
   * (services/dependency-outage.ts; `options.retryOn` narrows that), it is tried again with backoff,
   * as long as start-up's wait in all stays under the timeout; any other failure is thrown at once.
   * `attempt` must be safe to run again after such a failure (each step's is: migrations,
   * get-or-create in one transaction, idempotent calls).
   */
  async waitFor<T>(dependency: Dependency, step: string, attempt: () => Promise<T>, options: { retryOn?: (err: unknown) => boolean } = {}): Promise<T> {
    const retryable = options.retryOn ?? isDependencyOutage;
    this.step = step;
    let since: number | undefined;
    let last: unknown;
    let delayMs = this.backoff.firstMs;
    for (;;) {
      try {
        // Once waiting, an attempt that hangs (a host that drops packets) must not outlast the bound.
        const result = since === undefined ? await attempt() : await this.withinBound(attempt(), dependency, since, last);
        if (since !== undefined) {
          const downMs = Date.now() - since;
          this.waitedMs += downMs;
          this.step = step;
          this.logger.info({ dependency: dependency.name, step, down_ms: downMs }, 'dependency back: start-up goes on');
        }
        return result;
      } catch (err) {
        if (err instanceof StartupTimeout || !retryable(err)) throw err;
        last = err;
        if (since === undefined) {
          since = Date.now();
          this.step = `${step}: waiting for ${dependency.name}`;
          this.logger.warn(
            { dependency: dependency.name, step, err: (err as Error).message, timeout_ms: this.timeoutMs },
            'dependency unavailable during start-up: waiting for it',
          );
        }
        const leftMs = this.leftMs(since);
        if (leftMs <= 0) throw this.gaveUp(dependency, err);
        await new Promise((resolve) => setTimeout(resolve, Math.min(delayMs, leftMs)));
        delayMs = Math.min(delayMs * 2, this.backoff.maxMs);
      }
    }
  }

  /** How much longer start-up may wait, in a wait that began at `since`. */
  private leftMs(since: number): number {
    return this.timeoutMs - this.waitedMs - (Date.now() - since);
  }

  private gaveUp(dependency: Dependency, last: unknown): StartupTimeout {
    return new StartupTimeout(
      `${dependency.name} (${dependency.setting}) stayed unreachable: start-up waited ${Math.round(this.timeoutMs / 1000)} s for it in all (STARTUP_TIMEOUT_MS). Last error: ${(last as Error)?.message ?? String(last)}${dependency.hint ? `. ${dependency.hint}` : ''}`,
    );
  }

  private withinBound<T>(attempt: Promise<T>, dependency: Dependency, since: number, last: unknown): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(this.gaveUp(dependency, last)), Math.max(0, this.leftMs(since)));
    });
    // Past the bound the attempt may still fail later: that failure is no longer anyone's concern.
    attempt.catch(() => {});
    return Promise.race([attempt, bound]).finally(() => clearTimeout(timer));
  }
}
