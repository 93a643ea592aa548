// A replica's share of a shared rate limit, taken in leases. Asking Redis (or Postgres) for one point
// on every request costs a round trip, a write syscall on each side and the store's own CPU: on the
// bench machine about a fifth of what the API spends on GET /v1/agent-runs/{id}. A lease takes
// `leaseSize` points from the shared counter at once and hands them out locally, so the store sees
// one request in `leaseSize`.
//
// It never lets more through than the shared limit: points are taken from the shared counter before
// they are handed out. What it costs is the other way: points a replica leased but did not use
// when the window ends are lost, so a key spread over R replicas may get up to (R - 1) × (leaseSize
// - 1) fewer points in a window. Leases are small (1% of the limit, at most 16, and none below 200
// points a window), so that is under 1% of the limit per other replica, and limits below 200
// points are counted exactly, one point per request.
import { RateLimiterRes } from 'rate-limiter-flexible';

/** The part of a rate-limiter-flexible limiter this module uses. */
export interface PointLimiter {
  consume(key: string, points?: number): Promise<RateLimiterRes>;
}

/** What a request's rate limit needs: one point for a key, or a refusal (a thrown RateLimiterRes). */
export interface KeyLimiter {
  consume(key: string): Promise<RateLimiterRes>;
  /**
   * The point at once, when it can be decided without the store: a RateLimiterRes granted, one
   * thrown (refused), or undefined when `consume` must ask. The hot path's answer without a promise.
   */
  consumeFromLease?(key: string): RateLimiterRes | undefined;
}

interface Lease {
  /** Points of this lease not handed out yet. */
  left: number;
  /** Points left in the shared counter after this lease was taken. */
  sharedRemaining: number;
  /** When the shared window (and with it the lease) ends, in ms since the epoch. */
  endsAt: number;
}

/** Leases kept at most; past this, leases whose window ended are dropped, then the oldest. */
const MAX_LEASES = 10_000;

/** The lease size for a limit: 1% of it, at most 16, and 1 (no leasing) below 200 points. */
export function leaseSizeFor(points: number): number {
  return Math.max(1, Math.min(16, Math.floor(points / 100)));
}

export class LeasedLimiter implements KeyLimiter {
  private readonly leases = new Map<string, Lease>();
  /** A lease being taken, per key; concurrent requests of the key wait for it rather than take another. */
  private readonly taking = new Map<string, Promise<void>>();

  constructor(
    private readonly shared: PointLimiter,
    private readonly points: number,
    private readonly leaseSize: number,
  ) {}

  consumeFromLease(key: string): RateLimiterRes | undefined {
    const now = Date.now();
    const lease = this.leases.get(key);
    if (!lease || now >= lease.endsAt) return undefined;
    if (lease.left > 0) {
      lease.left--;
      return new RateLimiterRes(lease.sharedRemaining + lease.left, lease.endsAt - now, undefined, false);
    }
    // The shared counter only grows until its window ends: a spent window stays spent.
    if (lease.sharedRemaining === 0) throw new RateLimiterRes(0, lease.endsAt - now, undefined, false);
    return undefined;
  }

  async consume(key: string): Promise<RateLimiterRes> {
    for (;;) {
      const granted = this.consumeFromLease(key);
      if (granted) return granted;
      await (this.taking.get(key) ?? this.takeLease(key));
      const taken = this.leases.get(key);
      // The lease ended as it was taken (a window shorter than the round trip): count this request exactly.
      if (!taken || Date.now() >= taken.endsAt) return this.shared.consume(key, 1);
    }
  }

  private takeLease(key: string): Promise<void> {
    // The window is timed from when the store was asked, so a lease never outlives it.
    const askedAt = Date.now();
    const taken = this.shared
      .consume(key, this.leaseSize)
      .then(
        (res) => this.keep(key, this.leaseSize, res, askedAt),
        (outcome: unknown) => {
          if (!(outcome instanceof RateLimiterRes)) throw outcome;
          // The counter went past the limit with this lease: the points that were still there are
          // ours. A refusal that counted nothing (a blocked key) leaves none.
          const before = outcome.consumedPoints - this.leaseSize;
          this.keep(key, before < 0 ? 0 : Math.min(this.leaseSize, Math.max(0, this.points - before)), outcome, askedAt);
        },
      )
      .finally(() => this.taking.delete(key));
    this.taking.set(key, taken);
    return taken;
  }

  private keep(key: string, points: number, res: RateLimiterRes, askedAt: number): void {
    if (this.leases.size >= MAX_LEASES) this.evict();
    this.leases.set(key, { left: points, sharedRemaining: Math.max(0, res.remainingPoints), endsAt: askedAt + res.msBeforeNext });
  }

  /** Drops leases whose window ended, then, if that was not enough, the oldest (their points are lost, never added). */
  private evict(): void {
    const now = Date.now();
    for (const [key, lease] of this.leases) if (lease.endsAt <= now) this.leases.delete(key);
    for (const key of this.leases.keys()) {
      if (this.leases.size < MAX_LEASES * 0.9) break;
      this.leases.delete(key);
    }
  }
}
