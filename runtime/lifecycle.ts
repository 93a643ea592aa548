// Ordered, bounded shutdown on SIGINT/SIGTERM: steps run in reverse order of
// registration (last started, first stopped). A second signal exits at once.
import type { Logger } from 'pino';

type Step = { name: string; run: () => Promise<void>; first: boolean };

export class Lifecycle {
  private readonly steps: Step[] = [];
  private stopping: Promise<void> | undefined;

  constructor(
    private readonly logger: Logger,
    private readonly timeoutMs: number,
  ) {}

  /** Registers a shutdown step; steps registered later stop first, and `first` steps before all others. */
  onStop(name: string, run: () => Promise<void>, options: { first?: boolean } = {}): void {
    this.steps.push({ name, run, first: options.first ?? false });
  }

  handleSignals(): void {
    let firstSignalAt = 0;
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      process.on(signal, () => {
        // Ctrl-C reaches us twice (from the terminal and relayed by npm): only a
        // signal that comes clearly later means "stop waiting".
        if (this.stopping && Date.now() - firstSignalAt < 2_000) return;
        if (this.stopping) {
          this.logger.warn({ signal }, 'second signal: exiting immediately');
          process.exit(1);
        }
        firstSignalAt = Date.now();
        this.logger.info({ signal }, 'shutting down');
        void this.stop().then(() => process.exit(process.exitCode ?? 0));
      });
    }
  }

  stop(): Promise<void> {
    this.stopping ??= this.runSteps();
    return this.stopping;
  }

  private async runSteps(): Promise<void> {
    const force = setTimeout(() => {
      this.logger.error('shutdown timed out; exiting');
      process.exit(1);
    }, this.timeoutMs);
    force.unref();
    const reversed = [...this.steps].reverse();
    for (const step of [...reversed.filter((s) => s.first), ...reversed.filter((s) => !s.first)]) {
      try {
        await step.run();
        this.logger.debug({ step: step.name }, 'stopped');
      } catch (err) {
        process.exitCode = 1;
        this.logger.error({ step: step.name, err: (err as Error).message }, 'shutdown step failed');
      }
    }
    clearTimeout(force);
  }
}
