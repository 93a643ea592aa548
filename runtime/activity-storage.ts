// Temporal runs each activity inside two AsyncLocalStorage contexts, which it enters and never
// leaves: the activity's Context (@temporalio/activity's `asyncLocalStorage`) and, for the worker's
// own client, its connection's call context (`withAbortSignal` on NativeConnection.callContextStorage).
// Once one is on, Node 20 runs its hooks on every promise and callback of the process, whatever they
// belong to. Under `npm start` the API shares the worker's process, so from the first activity on
// (the reconcile schedule's, or the first run's) every request paid for them: /health 29 µs of CPU
// with `npm run api`, 37-39 µs on `npm start` (bench row 10). Both are turned off again whenever no
// activity is in flight. Nothing of ours enters the worker connection's call context outside an
// activity (no withDeadline or withMetadata on it; the API's client has a connection of its own,
// runtime/temporal-connection.ts): a call that did would lose its deadline when an activity ended.
import type { AsyncLocalStorage } from 'node:async_hooks';
import { asyncLocalStorage } from '@temporalio/activity';
import type { NativeConnection, Worker } from '@temporalio/worker';

/**
 * Turns the activity context storages off each time the worker has no activity in flight; the next
 * activity's run() turns them on again. Safe because the SDK counts an activity in flight from before
 * it enters them until after its run has ended (Worker's numInFlightActivities), and the count is read
 * again on the next turn of the event loop, just before turning them off.
 */
export function releaseActivityStorageWhenIdle(worker: Worker, connection: NativeConnection): { unsubscribe(): void } {
  const storages: AsyncLocalStorage<unknown>[] = [asyncLocalStorage, connection.callContextStorage];
  let checking = false;
  return worker.numInFlightActivities$.subscribe((inFlight) => {
    if (inFlight !== 0 || checking) return;
    checking = true;
    setImmediate(() => {
      checking = false;
      if (worker.getStatus().numInFlightActivities === 0) for (const storage of storages) storage.disable();
    });
  });
}

/** Whether AsyncLocalStorage `storage` is on now (its hooks running on every promise): for tests. */
export const storageIsOn = (storage: AsyncLocalStorage<unknown>) => (storage as unknown as { enabled: boolean }).enabled;

/** The activity Context's storage (@temporalio/activity), for tests. */
export const activityContextStorage: AsyncLocalStorage<unknown> = asyncLocalStorage;
