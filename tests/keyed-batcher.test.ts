// Write combining per key: an idle key's item runs at once; items that arrive while a batch
// runs go together in the next; keys never share a batch; a failed batch fails its items only;
// a batch runs in its first item's trace context.
import { context, createContextKey, ROOT_CONTEXT } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { PromiseContextManager } from '../runtime/promise-context-manager.ts';
import { KeyedBatcher } from '../services/keyed-batcher.ts';

describe('KeyedBatcher', () => {
  it('runs the first item alone, then what waited as one batch per key, answering each item its own output', async () => {
    const batches: string[] = [];
    const batcher = new KeyedBatcher<number, number>(async (key, items) => {
      batches.push(`${key}:${items.join(',')}`);
      await new Promise((r) => setTimeout(r, 10));
      return items.map((n) => n * 10);
    }, 3);
    const outputs = await Promise.all([1, 2, 3, 4, 5, 6].map((n) => batcher.submit(n % 2 ? 'odd' : 'even', n)));
    expect(outputs).toEqual([10, 20, 30, 40, 50, 60]);
    expect(batches).toEqual(['odd:1', 'even:2', 'odd:3,5', 'even:4,6']);
    // Idle again: the next item runs at once, alone.
    expect(await batcher.submit('odd', 7)).toBe(70);
    expect(batches.at(-1)).toBe('odd:7');
  });

  it('caps a batch at maxBatch items', async () => {
    const sizes: number[] = [];
    const batcher = new KeyedBatcher<number, number>(async (_key, items) => {
      sizes.push(items.length);
      await Promise.resolve();
      return items;
    }, 4);
    await Promise.all(Array.from({ length: 10 }, (_, i) => batcher.submit('k', i)));
    expect(sizes).toEqual([1, 4, 4, 1]);
  });

  it('rejects the items of a failed batch, and goes on with the next', async () => {
    let calls = 0;
    const batcher = new KeyedBatcher<number, number>(async (_key, items) => {
      calls++;
      await Promise.resolve();
      if (items.includes(2)) throw new Error('batch failed');
      return items;
    });
    const settled = await Promise.allSettled([1, 2, 3].map((n) => batcher.submit('k', n)));
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'rejected']);
    expect(calls).toBe(2);
    expect(await batcher.submit('k', 4)).toBe(4);
  });

  it("runs each batch in its first item's trace context, not in the context of the item that found the key idle", async () => {
    const REQUEST = createContextKey('request');
    const manager = new PromiseContextManager().enable();
    context.setGlobalContextManager(manager);
    try {
      const seen: unknown[] = [];
      const batcher = new KeyedBatcher<string, string>(async (_key, items) => {
        seen.push(context.active().getValue(REQUEST));
        await new Promise((r) => setTimeout(r, 5));
        return items;
      });
      const submitIn = (request: string) => context.with(ROOT_CONTEXT.setValue(REQUEST, request), () => batcher.submit('k', request));
      await Promise.all(['a', 'b', 'c'].map(submitIn));
      expect(seen).toEqual(['a', 'b']);
    } finally {
      context.disable();
      manager.disable();
    }
  });
});
