// Opaque list cursors: the (created_at, id) position of the last row of a page.
import { errors } from '../../domain/errors.ts';
import type { Position } from '../../services/keyset-page.ts';

export function encodeCursor(c: Position): string {
  return Buffer.from(JSON.stringify({ t: c.createdAt.toISOString(), id: c.id })).toString('base64url');
}

/** Throws 400 invalid_cursor for anything this API did not hand out. */
export function decodeCursor(raw: string): Position {
  try {
    const { t, id } = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as { t: string; id: string };
    const createdAt = new Date(t);
    if (typeof id !== 'string' || Number.isNaN(createdAt.getTime())) throw new Error('bad cursor');
    return { createdAt, id };
  } catch {
    throw errors.invalidCursor();
  }
}
