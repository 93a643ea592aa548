// NDJSON exports: a failure before the first line is an ordinary error answer;
// a failure part-way ends the stream with one error line and is logged as an error.
import type { Readable } from 'node:stream';
import type Koa from 'koa';
import { describe, expect, it } from 'vitest';
import { ndjsonExport } from '../api/contract/ndjson.ts';

function fakeCtx(logged: unknown[]) {
  return { state: { requestId: 'req_test', logger: { error: (...args: unknown[]) => logged.push(args) } } } as unknown as Koa.Context;
}

async function linesOf(stream: Readable): Promise<string[]> {
  let text = '';
  for await (const chunk of stream) text += chunk;
  return text.split('\n').filter(Boolean);
}

describe('ndjsonExport', () => {
  it('reads the first page before answering, so a failure there is an error, not an empty 200', async () => {
    const failing = () => Promise.reject(Object.assign(new Error('Failed query: select … params: secret text'), { name: 'DrizzleQueryError' }));
    await expect(ndjsonExport(fakeCtx([]), failing, (r) => r, 'x.ndjson')).rejects.toThrow(/Failed query/);
  });

  it("ends with one error line, and logs it as an error without the failure's message, when a later page fails", async () => {
    const logged: unknown[] = [];
    let calls = 0;
    const fetchPage = async (after: number | undefined) => {
      calls += 1;
      if (after === undefined) return { rows: [{ n: 1 }, { n: 2 }], next: 2 };
      throw Object.assign(new Error('Failed query: select … params: secret text'), {
        name: 'DrizzleQueryError',
        cause: { name: 'DatabaseError', code: '57P01' },
      });
    };
    const result = await ndjsonExport(fakeCtx(logged), fetchPage, (r) => r, 'x.ndjson');
    expect(result.status).toBe(200);
    const lines = await linesOf(result.body as Readable);
    expect(lines.slice(0, 2).map((l) => JSON.parse(l))).toEqual([{ n: 1 }, { n: 2 }]);
    expect(JSON.parse(lines[2]!)).toEqual({
      error: {
        message: expect.stringContaining('stopped before its end'),
        type: 'server_error',
        param: null,
        code: 'export_interrupted',
        request_id: 'req_test',
      },
    });
    expect(lines).toHaveLength(3);
    expect(calls).toBe(2);
    expect(logged).toHaveLength(1);
    expect(JSON.stringify(logged)).not.toContain('secret text');
    expect(JSON.stringify(logged)).toContain('57P01');
  });

  it('a complete export has no error line', async () => {
    const pages = [
      { rows: [{ n: 1 }], next: 1 },
      { rows: [{ n: 2 }], next: null },
    ];
    const result = await ndjsonExport(
      fakeCtx([]),
      async (after: number | undefined) => pages[after ?? 0]!,
      (r) => r,
      'x.ndjson',
    );
    expect((await linesOf(result.body as Readable)).map((l) => JSON.parse(l))).toEqual([{ n: 1 }, { n: 2 }]);
  });
});
