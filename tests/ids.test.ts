// Ids come from a pooled CSPRNG buffer (domain/ids.ts): each byte is used once, across refills.
import { describe, expect, it } from 'vitest';
import { newId } from '../domain/ids.ts';

describe('newId', () => {
  it('is the prefix and twice as many hex digits as bytes', () => {
    expect(newId('req', 12)).toMatch(/^req_[0-9a-f]{24}$/);
    expect(newId('run')).toMatch(/^run_[0-9a-f]{20}$/);
  });

  it('never repeats across many pool refills, and ids of odd sizes do not overlap', () => {
    const seen = new Set<string>();
    // 4 KiB pool: 20 000 ids of 10 to 13 bytes run through it about 57 times.
    for (let i = 0; i < 20_000; i++) seen.add(newId('x', 10 + (i % 4)).slice(2, 22));
    expect(seen.size).toBe(20_000);
  });

  it('refuses a size the pool cannot serve', () => {
    expect(() => newId('big', 5_000)).toThrow(RangeError);
  });
});
