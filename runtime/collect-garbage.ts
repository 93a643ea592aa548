// One full garbage collection, run once start-up has finished (runtime/startup.ts `ready`).
//
// Why: V8 gives an object that starts as an empty literal `{}`, or that JSON.parse makes, a map
// reached from one shared root map by a transition per first property name, and that root map
// takes at most 1,536 transitions. Loading this service fills it: protobuf descriptors, JSON
// schemas, compiled validators and package manifests make objects with hundreds of different first
// keys. Most of those objects are garbage once loading is done, but their transitions stay until a
// full collection clears them, and a busy process may not run one for many seconds. While the root
// is full, an object whose first key has no transition yet gets a map of its own, which no inline
// cache can reuse: `process.nextTick` then spent 1–3 % of a process's time making its tick objects,
// and every other such object paid alike (docs/performance.md, row 7 and row 10).
//
// Measured on 2026-11-28: `npm start` 1,536 transitions (full) before, 1,151 after; the API 1,536
// (traced) and about 1,500 (untraced) before, about 1,130 after.
import v8 from 'node:v8';
import vm from 'node:vm';

/** Runs a full collection now: a pause of tens of milliseconds, once, as the process becomes ready. */
export function collectGarbage(): void {
  // V8's collector without starting node with --expose-gc (as jest's leak detector reaches it):
  // the flag puts `gc` on contexts made while it is set, so it is set for one new context only. A
  // Temporal workflow's context, made later, must not get it.
  v8.setFlagsFromString('--expose-gc');
  let gc: () => void;
  try {
    gc = vm.runInNewContext('gc') as () => void;
  } finally {
    v8.setFlagsFromString('--no-expose-gc');
  }
  gc();
}
