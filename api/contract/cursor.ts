// Opaque list cursors: the (created_at, id) position of the last row of a page.
import { errors } from '../../domain/errors.ts';
import type { Position } from '../../services/keyset-page.ts';
import { withinYears } from './common.ts';

export function encodeCursor(c: Position): string {
  return Buffer.from(JSON.stringify({ t: c.createdAt.toISOString(), id: c.id })).toString('base64url');
}

/** Throws 400 invalid_cursor for anything this API did not hand out. */
export function decodeCursor(raw: string): Position {
  try {
    const { t, id } = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as { t: string; id: string };
    const createdAt = new Date(t);
    // Only what encodeCursor writes: a representable date and a plain id (a forged one never reaches the database).
    if (typeof t !== 'string' || typeof id !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(id) || !withinYears(createdAt)) throw new Error('bad cursor');
    return { createdAt, id };
  } catch {
    throw errors.invalidCursor();
  }
}
