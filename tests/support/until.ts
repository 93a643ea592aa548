// How a test waits for something to happen: on the condition, with a bound, never a fixed sleep.

/**
 * Polls `check` until it gives a truthy value, and returns that value. After `withinMs` it fails,
 * naming `what` it waited for.
 */
export async function until<T>(check: () => T | Promise<T>, what: string, { withinMs = 30_000, everyMs = 50 } = {}): Promise<NonNullable<T>> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${withinMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
