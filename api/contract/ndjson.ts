// Streams a paged listing as NDJSON: one JSON object per line, page by page,
// so an export of any size never sits in memory. The first page is read before
// anything is sent, so a failure then is an ordinary error answer; a failure
// later ends the stream with one documented error line and is logged as an error.
import { Readable } from 'node:stream';
import type Koa from 'koa';
import type { Logger } from 'pino';
import { errors, toErrorBody } from '../../domain/errors.ts';
import { loggableError } from '../middleware/error-handler.ts';
import type { RouteResult } from './route.ts';

export interface Page<Row, Cursor> {
  rows: Row[];
  next: Cursor | null;
}

/** Said in each export route's description. */
export const NDJSON_FAILURE_NOTE =
  'If the export fails part-way, its last line is an error object (code `export_interrupted`) instead of a row; a complete export never ends with one.';

export async function ndjsonExport<Row, Cursor>(
  ctx: Koa.Context,
  fetchPage: (after: Cursor | undefined) => Promise<Page<Row, Cursor>>,
  view: (row: Row) => unknown,
  filename: string,
): Promise<RouteResult> {
  const first = await fetchPage(undefined);
  const requestId = ctx.state.requestId as string;
  const logger = ctx.state.logger as Logger | undefined;
  async function* lines() {
    let page: Page<Row, Cursor> | null = first;
    try {
      while (page) {
        for (const row of page.rows) yield `${JSON.stringify(view(row))}\n`;
        page = page.next === null ? null : await fetchPage(page.next);
      }
    } catch (err) {
      logger?.error({ request_id: requestId, err: loggableError(err as Error) }, 'export interrupted');
      yield `${JSON.stringify(toErrorBody(errors.exportInterrupted(), requestId))}\n`;
    }
  }
  return {
    status: 200,
    body: Readable.from(lines()),
    headers: { 'Content-Type': 'application/x-ndjson; charset=utf-8', 'Content-Disposition': `attachment; filename="${filename}"` },
  };
}
