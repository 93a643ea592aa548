// The bench's view of runs in flight: each awaited run resolves once its row reaches one of the
// statuses asked for. One poller reads them all from Postgres, one statement every 100 ms while any is
// awaited (not a request per run): waiting adds 10 small reads a second, against the tens of writes a
// second the runs make, and at most 100 ms to a run that takes seconds.
import pg from 'pg';

const TICK_MS = 100;

export class RunWatcher {
  private readonly waiting = new Map<string, { statuses: string[]; resolve: (status: string) => void }>();
  private readonly client: pg.Client;
  private timer: NodeJS.Timeout | undefined;
  private polling = false;

  constructor(databaseUrl: string) {
    this.client = new pg.Client({ connectionString: databaseUrl });
  }

  async open(): Promise<void> {
    await this.client.connect();
    this.timer = setInterval(() => void this.tick(), TICK_MS);
  }

  /** The status `runId` is in once it is one of `statuses`. */
  reached(runId: string, statuses: string[]): Promise<string> {
    return new Promise((resolve) => this.waiting.set(runId, { statuses, resolve }));
  }

  private async tick(): Promise<void> {
    if (this.polling || this.waiting.size === 0) return;
    this.polling = true;
    try {
      const { rows } = await this.client.query<{ id: string; status: string }>('select id, status from runs where id = any($1::text[])', [
        [...this.waiting.keys()],
      ]);
      for (const r of rows) {
        const w = this.waiting.get(r.id);
        if (!w?.statuses.includes(r.status)) continue;
        this.waiting.delete(r.id);
        w.resolve(r.status);
      }
    } finally {
      this.polling = false;
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.client.end();
  }
}

/** POSTs one run (no Idempotency-Key: a new run each time) and answers its id. */
export async function createRun(apiUrl: string, secret: string, input: string): Promise<string> {
  const res = await fetch(`${apiUrl}/v1/agent-runs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ input }),
  });
  const body = (await res.json()) as { run_id?: string };
  if (res.status !== 201 || !body.run_id) throw new Error(`POST /v1/agent-runs answered ${res.status}`);
  return body.run_id;
}
