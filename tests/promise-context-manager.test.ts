// Unit tests: the context manager every process traces with (runtime/promise-context-manager.ts).
// It must carry a request's context wherever its code waits on a promise, keep two requests'
// contexts apart, and turn on no async_hooks (which cost every request: docs/performance.md, row 7).
import { spawnSync } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { type Context, createContextKey, ROOT_CONTEXT } from '@opentelemetry/api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PromiseContextManager } from '../runtime/promise-context-manager.ts';

const REQUEST = createContextKey('request');
const contextOf = (name: string) => ROOT_CONTEXT.setValue(REQUEST, name);
let manager: PromiseContextManager;
const seen = () => manager.active().getValue(REQUEST);
const tick = () => new Promise<void>((resolve) => process.nextTick(resolve));
const timer = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A thenable that is not a promise (as drizzle's query builders are): awaited through its own then. */
class Thenable {
  then(resolve: (value: unknown) => void) {
    const during = seen();
    setImmediate(() => resolve(during));
  }
}

beforeEach(() => {
  manager = new PromiseContextManager().enable();
});

afterEach(() => {
  manager.disable();
});

describe('the promise context manager', () => {
  it('carries a context across every kind of wait on a promise, and keeps two requests apart', async () => {
    const trail = async (name: string) => {
      const steps: unknown[] = [];
      await null;
      steps.push(seen());
      steps.push(await new Thenable(), seen());
      await timer(2); // settled by a timer, which itself runs without a context
      steps.push(seen());
      await tick();
      steps.push(seen());
      const afterTick = async () => {
        await tick();
        return seen();
      };
      steps.push(...(await Promise.all([afterTick(), Promise.resolve().then(seen)])), seen());
      await Promise.reject(new Error('no')).catch(() => steps.push(seen()));
      for await (const inner of (async function* () {
        yield seen();
        await timer(1);
        yield seen();
      })())
        steps.push(inner);
      steps.push(seen());
      expect(steps).toEqual(Array.from({ length: steps.length }, () => name));
      return steps.length;
    };
    // Interleaved: each waits while the other runs.
    const lengths = await Promise.all(['a', 'b'].map((name) => manager.with(contextOf(name), () => trail(name))));
    expect(lengths).toEqual([12, 12]);
    expect(seen()).toBeUndefined();
  });

  it('restores the outer context after `with`, even when its function throws', () => {
    manager.with(contextOf('outer'), () => {
      expect(() =>
        manager.with(contextOf('inner'), () => {
          throw new Error('boom');
        }),
      ).toThrow('boom');
      expect(seen()).toBe('outer');
    });
    expect(manager.active()).toBe(ROOT_CONTEXT);
  });

  it('leaves a callback without a context unless it is bound: a function or an event emitter', async () => {
    const context: Context = contextOf('bound');
    const [unbound, bound, emitted] = await new Promise<unknown[]>((resolve) =>
      manager.with(context, () => {
        const results: unknown[] = [];
        const emitter = manager.bind(context, new EventEmitter());
        emitter.on('event', () => results.push(seen()));
        setTimeout(() => results.push(seen()), 1);
        setTimeout(
          manager.bind(context, () => results.push(seen())),
          2,
        );
        setTimeout(() => {
          emitter.emit('event');
          resolve(results);
        }, 3);
      }),
    );
    expect([unbound, bound, emitted]).toEqual([undefined, 'bound', 'bound']);
  });

  it('carries nothing once disabled', async () => {
    manager.disable();
    const after = await manager.with(contextOf('gone'), async () => {
      await null;
      return seen();
    });
    expect(after).toBeUndefined();
  });

  it('is what tracing runs on, and no async_hooks are turned on by a traced request', () => {
    // A fresh process: tracing starts once per process. With async_hooks on (as AsyncLocalStorage
    // turns them on), each promise reaction runs under an async id of its own; with them off, none.
    const script = `
      import { context, trace } from '@opentelemetry/api';
      import { executionAsyncId } from 'node:async_hooks';
      import { startTelemetry } from './runtime/telemetry.ts';
      startTelemetry({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_TRACES_SAMPLER: 'always_on' });
      const span = trace.getTracer('test').startSpan('request');
      const ids = [];
      const sameSpan = await context.with(trace.setSpan(context.active(), span), async () => {
        for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(() => Promise.resolve().then(() => resolve(ids.push(executionAsyncId())))));
        return trace.getActiveSpan() === span;
      });
      span.end();
      console.log(JSON.stringify({ manager: context._getContextManager().constructor.name, sameSpan, asyncIds: new Set(ids).size }));
      process.exit(0);
    `;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 });
    expect(child.stderr).toBe('');
    expect(JSON.parse(child.stdout)).toEqual({ manager: 'PromiseContextManager', sameSpan: true, asyncIds: 1 });
  });
});
