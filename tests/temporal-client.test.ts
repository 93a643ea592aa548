// The API's Temporal client: every call has a deadline, set by a gRPC
// interceptor on the connection, and nothing turns on an AsyncLocalStorage
// (whose promise hooks would tax every promise of the API process; issue 14).
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { isGrpcDeadlineError, isGrpcServiceError } from '@temporalio/client';
import { afterAll, describe, expect, it, inject } from 'vitest';
import { localTemporal } from '../config/temporal-connection-settings.ts';
import { isTemporalReachable, lazyTemporalClient, type TemporalHandle } from '../runtime/temporal-client.ts';
import { testCodec } from './support/payload-codec.ts';

/** AsyncLocalStorage's own flag (Node 20): true once run() or enterWith() has turned its hooks on. */
function contextStorageEnabled(handle: TemporalHandle): boolean {
  return (handle.connection.callContextStorage as unknown as { enabled: boolean }).enabled;
}

/** A TCP server that accepts connections and never answers: a Temporal frontend that hangs. */
async function silentServer(): Promise<{ address: string; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

describe('the API Temporal client', () => {
  const closers: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const close of closers.reverse()) await close();
  });

  it('ends a call to a frontend that never answers at its deadline, as DEADLINE_EXCEEDED', async () => {
    const silent = await silentServer();
    closers.push(() => silent.close());
    const handle = lazyTemporalClient(localTemporal(silent.address), testCodec(), 400);
    closers.push(() => handle.close());
    expect(handle.callDeadlineMs).toBe(400);

    const started = Date.now();
    const err = await handle.client.workflow
      .getHandle('wf-never-answered')
      .describe()
      .catch((e: unknown) => e);
    const elapsed = Date.now() - started;
    expect(isGrpcDeadlineError(err) || isGrpcDeadlineError((err as Error).cause)).toBe(true);
    // The deadline, not the 20 s of gRPC retries nor a hang (generous bounds: the machine may be busy).
    expect(elapsed).toBeGreaterThanOrEqual(350);
    expect(elapsed).toBeLessThan(4_000);

    // The probe has its own deadline (2 s) and no retries.
    const probeStarted = Date.now();
    await expect(handle.probe()).rejects.toThrow();
    expect(Date.now() - probeStarted).toBeLessThan(5_000);
    expect(await isTemporalReachable(localTemporal(silent.address))).toBe(false);
    expect(contextStorageEnabled(handle)).toBe(false);
  });

  it('reaches the dev server without turning on the call-context storage', async () => {
    const handle = lazyTemporalClient(localTemporal(inject('temporalAddress')), testCodec());
    closers.push(() => handle.close());
    await handle.probe();
    expect(await isTemporalReachable(localTemporal(inject('temporalAddress')))).toBe(true);
    const err = await handle.client.workflow
      .getHandle('wf-that-does-not-exist')
      .describe()
      .catch((e: unknown) => e);
    // NOT_FOUND (5) from the server: the call went through the interceptors and was answered.
    const grpcErr = isGrpcServiceError(err) ? err : (err as Error).cause;
    expect(isGrpcServiceError(grpcErr) ? grpcErr.code : (err as Error).name).toSatisfy((v) => v === 5 || v === 'WorkflowNotFoundError');

    // The API's calls: start, describe, cancel (on a queue no worker polls).
    const workflowId = `wf-client-${randomUUID()}`;
    const started = await handle.client.workflow.start('agentRunWorkflow', { taskQueue: `no-worker-${randomUUID()}`, workflowId, args: [] });
    expect((await started.describe()).status.name).toBe('RUNNING');
    await started.cancel();
    await started.terminate('test over');
    expect((await started.describe()).status.name).toBe('TERMINATED');
    expect(contextStorageEnabled(handle)).toBe(false);
  });
});
