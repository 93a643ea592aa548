// Streams a paged listing as NDJSON: one JSON object per line, page by page,
// so an export of any size never sits in memory.
import { Readable } from 'node:stream';
import type { RouteResult } from './route.ts';

export interface Page<Row, Cursor> {
  rows: Row[];
  next: Cursor | null;
}

export function ndjsonExport<Row, Cursor>(
  fetchPage: (after: Cursor | undefined) => Promise<Page<Row, Cursor>>,
  view: (row: Row) => unknown,
  filename: string,
): RouteResult {
  async function* lines() {
    let after: Cursor | undefined;
    do {
      const page = await fetchPage(after);
      for (const row of page.rows) yield `${JSON.stringify(view(row))}\n`;
      after = page.next ?? undefined;
    } while (after !== undefined);
  }
  return {
    status: 200,
    body: Readable.from(lines()),
    headers: { 'Content-Type': 'application/x-ndjson; charset=utf-8', 'Content-Disposition': `attachment; filename="${filename}"` },
  };
}
