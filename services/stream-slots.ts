// Bounds the event streams one API process holds open, in all and per key: a follower costs memory
// and a socket for as long as it listens, so a client that opens streams without end is refused
// (429 for its key's share, 503 for the process) instead of starving the others.
import { errors } from '../domain/errors.ts';

export interface StreamLimits {
  perProcess: number;
  perKey: number;
}

export interface StreamSlots {
  /** Takes a slot for `keyId`, or throws 429/503 with Retry-After; the returned function gives it back (once). */
  acquire(keyId: string): () => void;
  readonly open: number;
}

export function streamSlots(limits: StreamLimits): StreamSlots {
  let open = 0;
  const byKey = new Map<string, number>();
  return {
    acquire(keyId) {
      const held = byKey.get(keyId) ?? 0;
      if (held >= limits.perKey) throw errors.tooManyStreamsForKey(limits.perKey);
      if (open >= limits.perProcess) throw errors.tooManyStreams();
      open += 1;
      byKey.set(keyId, held + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        open -= 1;
        const left = (byKey.get(keyId) ?? 1) - 1;
        if (left > 0) byKey.set(keyId, left);
        else byKey.delete(keyId);
      };
    },
    get open() {
      return open;
    },
  };
}
