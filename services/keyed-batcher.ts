// Combining per key. Work that serialises on one row (a tenant's running balance: every
// reserve locks it until its commit, fsync included) goes no faster with more concurrent
// requests, only queues longer. Batching what arrived while the previous batch ran makes one
// lock and one commit serve many requests, so throughput grows with load instead of staying flat.
// Reads of runs combine the same way, to share one round trip (services/runs.ts, getRun).
// The first item of an idle key runs at once: no request waits for a timer.
import { type Context, context } from '@opentelemetry/api';

interface Waiting<I, O> {
  item: I;
  resolve: (out: O) => void;
  reject: (err: unknown) => void;
  /** The trace context the item was submitted in. */
  context: Context;
}

export class KeyedBatcher<I, O> {
  /** Items waiting for the batch in flight to finish, per key with a batch in flight. */
  private readonly queues = new Map<string, Waiting<I, O>[]>();

  /**
   * `work` gets a key's items in arrival order and answers one output per item, in the same order.
   * When it throws, every item of the batch gets the error.
   */
  constructor(
    private readonly work: (key: string, items: I[]) => Promise<O[]>,
    private readonly maxBatch = 64,
  ) {}

  submit(key: string, item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      const waiting = { item, resolve, reject, context: context.active() };
      const queue = this.queues.get(key);
      if (queue) {
        queue.push(waiting);
        return;
      }
      const fresh: Waiting<I, O>[] = [waiting];
      this.queues.set(key, fresh);
      void this.drain(key, fresh);
    });
  }

  private async drain(key: string, queue: Waiting<I, O>[]): Promise<void> {
    while (queue.length > 0) {
      const batch = queue.splice(0, this.maxBatch);
      try {
        // In the trace of its first item, a request waiting for it (its queries are that request's spans):
        // the loop itself goes on in the context of the item that found the key idle, long done by now.
        const outputs = await context.with(batch[0]!.context, () =>
          this.work(
            key,
            batch.map((w) => w.item),
          ),
        );
        for (const [i, w] of batch.entries()) w.resolve(outputs[i]!);
      } catch (err) {
        for (const w of batch) w.reject(err);
      }
    }
    this.queues.delete(key);
  }
}
