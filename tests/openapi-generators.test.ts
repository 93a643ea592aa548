// The OpenAPI document stays generator-friendly: no schema that is only `{"type": "null"}` (which
// openapi-generator turns into a model it never writes), request fields with a default are optional,
// the document is valid OpenAPI 3.1 and the rewrite changed nothing that validates. With
// openapi-generator available (npm run openapi-generator:install, or OPENAPI_GENERATOR_CLI), its
// typescript-fetch client compiles and its python client generates and byte-compiles.
// No server: the document is built in-process, as `npm run client:generate` builds it.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Validator } from '@seriousme/openapi-schema-validator';
import Ajv2020 from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generatorFriendly } from '../api/contract/openapi.ts';
import { buildClientDocument } from '../scripts/generate-client.ts';

const run = promisify(execFile);
const root = fileURLToPath(new URL('..', import.meta.url));

// `any`: the document is walked generically
let doc: any;
beforeAll(() => {
  doc = buildClientDocument();
});

/** Every schema object under `node`, with whether it is a direct member of an anyOf / oneOf, and where. */
function* schemas(node: unknown, where = '#', inUnion = false): Generator<{ schema: Record<string, unknown>; where: string; inUnion: boolean }> {
  if (Array.isArray(node)) {
    for (const [i, item] of node.entries()) yield* schemas(item, `${where}/${i}`, inUnion);
    return;
  }
  if (!node || typeof node !== 'object') return;
  const object = node as Record<string, unknown>;
  yield { schema: object, where, inUnion };
  for (const [key, value] of Object.entries(object)) {
    if (['example', 'examples', 'default', 'const', 'enum'].includes(key)) continue;
    yield* schemas(value, `${where}/${key}`, key === 'anyOf' || key === 'oneOf');
  }
}

describe('the OpenAPI document', () => {
  it('is valid OpenAPI 3.1', async () => {
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('has no schema that is only {"type": "null"} outside an anyOf / oneOf', () => {
    const pureNull = [...schemas(doc)].filter(({ schema, inUnion }) => schema.type === 'null' && !inUnion).map(({ where }) => where);
    expect(pureNull).toEqual([]);
    // What z.null() became: const null, which still accepts null and only null.
    const logprobs = doc.components.schemas.ChatCompletion.properties.choices.items.properties.logprobs;
    expect(logprobs).toEqual({ const: null });
  });

  it('validates as before the rewrite', () => {
    const ajv = new Ajv2020.default({ strict: false });
    ajv.addSchema(doc, 'openapi');
    const chunk = ajv.compile({ $ref: 'openapi#/components/schemas/ChatCompletionChunk' });
    const base = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'svc-workspace' };
    expect(chunk({ ...base, choices: [{ index: 0, delta: { content: 'hi' }, finish_reason: null, logprobs: null }] })).toBe(true);
    expect(chunk({ ...base, choices: [{ index: 0, delta: { content: 'hi' }, finish_reason: null, logprobs: {} }] })).toBe(false);
    // The rewrite keeps anyOf members, data and names that merely look like keywords.
    const sample = { properties: { default: { type: 'null' }, example: { anyOf: [{ type: 'string' }, { type: 'null' }] } }, examples: [{ type: 'null' }] };
    expect(generatorFriendly(sample)).toEqual({ properties: { default: { const: null }, example: sample.properties.example }, examples: [{ type: 'null' }] });
  });

  it('lists no request field with a default as required, in bodies and query parameters', () => {
    const resolve = (s: any): any => (s?.$ref ? resolve(doc.components.schemas[s.$ref.split('/').pop()]) : s);
    const problems: string[] = [];
    const check = (s: any, where: string, seen = new Set<unknown>()) => {
      s = resolve(s);
      if (!s || typeof s !== 'object' || seen.has(s)) return;
      seen.add(s);
      for (const [name, property] of Object.entries<any>(s.properties ?? {})) {
        if (s.required?.includes(name) && resolve(property)?.default !== undefined) problems.push(`${where}.${name}`);
        check(property, `${where}.${name}`, seen);
      }
      for (const member of [...(s.anyOf ?? []), ...(s.oneOf ?? []), ...(s.allOf ?? [])]) check(member, where, seen);
      if (s.items) check(s.items, `${where}[]`, seen);
    };
    let bodies = 0;
    for (const [p, item] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        const body = op.requestBody?.content?.['application/json']?.schema;
        if (body) {
          bodies++;
          check(body, `${method.toUpperCase()} ${p}`);
        }
        for (const param of op.parameters ?? [])
          if (param.required && resolve(param.schema)?.default !== undefined) problems.push(`${method.toUpperCase()} ${p} ?${param.name}`);
      }
    }
    expect(bodies).toBeGreaterThan(10);
    expect(problems).toEqual([]);
    // For example: a run needs only its input; memory and model have defaults.
    expect(doc.components.schemas.CreateRunRequest.required).toEqual(['input']);
  });
});

/** openapi-generator, as OPENAPI_GENERATOR_CLI, on PATH, or where `npm run openapi-generator:install` puts it. */
async function findGenerator(): Promise<string | undefined> {
  const candidates = [process.env.OPENAPI_GENERATOR_CLI, 'openapi-generator-cli', path.join(root, '.tools/openapi-generator/bin/openapi-generator-cli')];
  for (const candidate of candidates) {
    if (!candidate || (candidate.includes('/') && !existsSync(candidate))) continue;
    try {
      await run(candidate, ['version'], { timeout: 60_000 });
      return candidate;
    } catch {
      // not this one
    }
  }
  return undefined;
}

describe('openapi-generator', () => {
  const SKIP = 'openapi-generator is not available (needs Java 11+): run `npm run openapi-generator:install` or set OPENAPI_GENERATOR_CLI';
  let generator: string | undefined;
  let dir: string;
  let spec: string;
  beforeAll(async () => {
    generator = await findGenerator();
    dir = mkdtempSync(path.join(os.tmpdir(), 'gws-openapi-generator-'));
    spec = path.join(dir, 'openapi.json');
    writeFileSync(spec, JSON.stringify(doc));
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const generate = (lang: string, out: string) =>
    run(generator!, ['generate', '-g', lang, '-i', spec, '-o', out], { timeout: 180_000, maxBuffer: 32 * 1024 * 1024 });

  it('generates a typescript-fetch client that compiles', async (ctx) => {
    // CI installs it (.ci/run), so there a missing generator is a failure, not a skip.
    if (!generator && process.env.CI === 'true') throw new Error(SKIP);
    if (!generator) ctx.skip(SKIP);
    const out = path.join(dir, 'typescript-fetch');
    await generate('typescript-fetch', out);
    writeFileSync(
      path.join(out, 'tsconfig.check.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2020',
          lib: ['ES2020', 'DOM'],
          module: 'ES2020',
          moduleResolution: 'bundler',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: [],
        },
        include: ['**/*.ts'],
      }),
    );
    const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
    const compiled = await run(process.execPath, [tsc, '-p', path.join(out, 'tsconfig.check.json')], { timeout: 180_000 }).catch(
      (err: { stdout?: string }) => ({ stdout: err.stdout ?? String(err), failed: true }),
    );
    expect('failed' in compiled ? compiled.stdout : '').toBe('');
  }, 300_000);

  it('generates a python client', async (ctx) => {
    if (!generator) ctx.skip(SKIP);
    const out = path.join(dir, 'python');
    await generate('python', out);
    expect(existsSync(path.join(out, 'openapi_client/models/agent_run.py'))).toBe(true);
    await run('python3', ['-m', 'compileall', '-q', path.join(out, 'openapi_client')], { timeout: 120_000 });
  }, 300_000);
});
