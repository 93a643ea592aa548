// The tool-calling protocol with a capable model, scripted: every case of scripts/eval/scripted/
// cases.json (written by a helper session that saw only the contract and the catalog) runs through
// the real API, worker, Temporal dev server and Postgres, over real MCP servers (filesystem, memory,
// time and git, as the case's catalog plugs them in), and must end exactly as the case says: its
// status, its approval rounds, what arrived at the webhook, the files written, the answers, and the
// effects performed (tests/support/scripted-eval.ts). Any failure is the service's own.
// `npm run eval -- --provider scripted` runs the same cases on `npm start`.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setRoute } from '../services/routing.ts';
import { setWebhookUrl } from '../services/tenants.ts';
import { webhookReceiver } from './support/fake-servers.ts';
import { newTenant, type RunStack, startRunStack } from './support/run-stack.ts';
import { runScriptedCase, ScriptedWorld } from './support/scripted-eval.ts';
import { scriptedCases, scriptedCatalogs, scriptedModel, substituted } from './support/scripted-model.ts';

const root = path.resolve(import.meta.dirname, '..');
const pyBin = execFileSync('bash', [path.join(root, 'scripts/ensure-mcp-eval-servers.sh'), '--path'], { encoding: 'utf8' }).trim();

for (const catalog of ['readme', 'servers'] as const) {
  describe(`the scripted capable model on the ${catalog} catalog`, () => {
    const scratch = mkdtempSync(path.join(tmpdir(), `gws-tools-${catalog}-`));
    const world = new ScriptedWorld({
      DIR: path.join(scratch, 'share'),
      REPO: path.join(scratch, 'repo'),
      MEMORY_FILE: path.join(scratch, 'memory.jsonl'),
      NODE_MODULES: path.join(root, 'node_modules'),
      PY_BIN: pyBin,
    });
    const cases = substituted(
      scriptedCases().filter((c) => c.catalog === catalog),
      world.places,
    );
    let stack: RunStack;
    let model: Awaited<ReturnType<typeof scriptedModel>>;
    let hook: Awaited<ReturnType<typeof webhookReceiver>>;

    beforeAll(async () => {
      world.create();
      const file = path.join(scratch, 'tools.json');
      writeFileSync(file, JSON.stringify(substituted(scriptedCatalogs()[catalog], world.places)));
      model = await scriptedModel(() => cases);
      hook = await webhookReceiver();
      // The catalog names the memory server's file by reference, as docs/tools.md has an operator do.
      process.env.EVAL_MEMORY_FILE = world.places.MEMORY_FILE;
      stack = await startRunStack({ UPSTREAM_BASE_URL: model.url, UPSTREAM_MODEL_MAP: '{"svc-workspace":"scripted-capable"}', TOOL_SERVERS_FILE: file });
    }, 120_000);
    afterAll(async () => {
      await stack?.close();
      await model?.close();
      await hook?.close();
      rmSync(scratch, { recursive: true, force: true });
    });

    it.each(cases.map((c) => [c.id, c] as const))('%s', { timeout: 90_000 }, async (_id, c) => {
      world.reset(c);
      hook.received.length = 0;
      const db = stack.app.database.db;
      const t = await newTenant(db, 100_000);
      await setRoute(db, t.tenantId, 'svc-workspace', 'upstream');
      await setWebhookUrl(db, t.name, hook.url, { allowLoopback: true });
      const as = (key: string) => (method: 'GET' | 'POST', route: string, body?: unknown, headers?: Record<string, string>) =>
        stack.api.request(method, route, { key, ...(body === undefined ? {} : { body }), ...(headers ? { headers } : {}) });
      const outcome = await runScriptedCase(
        as(t.key),
        c,
        world,
        () => hook.received.map((d) => d.body as { to?: unknown; message?: unknown }),
        () => model.problems,
        as(t.approverKey),
      );
      expect(outcome.problems).toEqual([]);
    });
  });
}
