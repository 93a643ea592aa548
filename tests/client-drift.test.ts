// The committed typed client (client/schema.ts) is what `npm run client:generate` makes from the
// current OpenAPI document, byte for byte; and its request types leave fields with a default optional.
// No server: the document is built in-process.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { paths } from '../client/index.ts';
import { CLIENT_SCHEMA_PATH, generateClientSchema } from '../scripts/generate-client.ts';

describe('client/schema.ts', () => {
  it('matches a fresh generation from the OpenAPI document', async () => {
    const committed = readFileSync(CLIENT_SCHEMA_PATH, 'utf8');
    const fresh = await generateClientSchema();
    if (committed !== fresh) {
      const a = committed.split('\n');
      const b = fresh.split('\n');
      const line = a.findIndex((text, i) => text !== b[i]);
      expect.fail(
        `client/schema.ts is out of date with the OpenAPI document: run npm run client:generate (first difference at line ${line + 1}:\n- ${a[line] ?? '(end of file)'}\n+ ${b[line] ?? '(end of file)'})`,
      );
    }
  }, 60_000);

  it('types request bodies with their defaulted fields optional', () => {
    // Compiles only while memory and model (which have defaults) are optional: checked by `npm run typecheck`.
    type CreateRun = paths['/v1/agent-runs']['post']['requestBody']['content']['application/json'];
    type Chat = paths['/v1/chat/completions']['post']['requestBody']['content']['application/json'];
    const run: CreateRun = { input: 'Summarise the report. Revenue rose 4%.' };
    const chat: Chat = { model: 'svc-workspace', messages: [{ role: 'user', content: 'hi' }] };
    expect([run, chat]).toHaveLength(2);
  });
});
