// The drill's webhook receiver, on loopback: counts completion notifications per
// webhook-id (Standard Webhooks) and tool deliveries per Idempotency-Key, and answers 204.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Receiver {
  url: string;
  /** Completion notifications received, per webhook-id. */
  notifications: Map<string, number>;
  /** webhook_delivery tool posts received, per Idempotency-Key (`<run_id>:<step_id>`). */
  deliveries: Map<string, number>;
  close(): Promise<void>;
}

const bump = (counts: Map<string, number>, id: string) => counts.set(id, (counts.get(id) ?? 0) + 1);

/** `toolDelayMs`: how long a tool delivery waits for its answer (the rollout drill keeps runs mid-execute so). */
export async function startReceiver(options: { toolDelayMs?: number } = {}): Promise<Receiver> {
  const notifications = new Map<string, number>();
  const deliveries = new Map<string, number>();
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const webhookId = req.headers['webhook-id'];
      const key = req.headers['idempotency-key'];
      // Tool deliveries carry an Idempotency-Key (and are signed too, so they have a webhook-id as well).
      if (typeof key === 'string') bump(deliveries, key);
      else if (typeof webhookId === 'string') bump(notifications, webhookId);
      const delayMs = typeof key === 'string' ? (options.toolDelayMs ?? 0) : 0;
      setTimeout(() => res.writeHead(204).end(), delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    notifications,
    deliveries,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
