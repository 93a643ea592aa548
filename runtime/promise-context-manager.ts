// The OpenTelemetry context manager of every process: it carries a context along promise chains
// (`await`, `then`, `Promise.all`, async generators, thenables) with V8's promise hooks, instead of
// the SDK's default AsyncLocalStorage.
//
// Why: on Node 20, one AsyncLocalStorage in use turns on async_hooks for the whole process, and
// every promise, tick and timer of every request then runs them, traced or not. Here, a promise made
// outside any context costs one hook call that does nothing, and ticks and timers nothing at all:
// `/health` under tracing gained clearly, one run's GET by less than its spread (bench row 7,
// 2026-11-28 morning, in git history). Much of what a traced GET still paid then was not these hooks but a
// V8 map that start-up had filled (runtime/telemetry.ts `startedWithoutRequireHook`).
// Node 22's AsyncContextFrame would need no hooks; the stack is Node 20.
//
// What it does not carry: a callback (a timer, a tick, an event listener, a socket's data) runs
// without a context unless it was bound with `context.bind`, as the SDK's instrumentations bind
// theirs, and as db/pool.ts binds a pooled connection's callback. The `await` of a promise that such
// a callback settles resumes in the awaiting code's context, since that lives on the awaiting side.
import v8 from 'node:v8';
import { type Context, ROOT_CONTEXT } from '@opentelemetry/api';
// Deep import: the package exports only its two AsyncLocalStorage/async_hooks managers, and this
// base class is what binds functions and event emitters to a context for any manager.
import { AbstractAsyncHooksContextManager } from '@opentelemetry/context-async-hooks/build/src/AbstractAsyncHooksContextManager.js';

/** Where a promise made inside a context keeps it: a promise made outside one has none. */
const CONTEXT = Symbol('gws.otel-context');
type Carrier = { [CONTEXT]?: Context };

export class PromiseContextManager extends AbstractAsyncHooksContextManager {
  private current: Context = ROOT_CONTEXT;
  /** The contexts that promise reactions interrupted (reactions run one after another, each restoring). */
  private readonly interrupted: Context[] = [];
  private stopHooks: (() => void)[] = [];

  active(): Context {
    return this.current;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(context: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    const previous = this.current;
    this.current = context;
    try {
      return fn.call(thisArg, ...args);
    } finally {
      this.current = previous;
    }
  }

  enable(): this {
    if (this.stopHooks.length > 0) return this;
    // Each returns the function that removes it (typed `Function` by @types/node).
    const hooks = [
      // A promise remembers the context it was made in: an await's, or a then's, is made by the code that waits.
      v8.promiseHooks.onInit((promise) => {
        if (this.current !== ROOT_CONTEXT) (promise as Carrier)[CONTEXT] = this.current;
      }),
      // Its reaction (the code after the await, the then's callback) runs in that context.
      v8.promiseHooks.onBefore((promise) => {
        this.interrupted.push(this.current);
        this.current = (promise as Carrier)[CONTEXT] ?? ROOT_CONTEXT;
      }),
      v8.promiseHooks.onAfter(() => {
        this.current = this.interrupted.pop() ?? ROOT_CONTEXT;
      }),
    ];
    this.stopHooks = hooks as (() => void)[];
    return this;
  }

  disable(): this {
    for (const stop of this.stopHooks) stop();
    this.stopHooks = [];
    this.current = ROOT_CONTEXT;
    this.interrupted.length = 0;
    return this;
  }
}
