// `npm run eval -- --provider scripted`: the scripted capable model (tests/support/scripted-model.ts)
// as `npm start`'s upstream, over the catalogs the eval's cases were written for
// (scripts/eval/scripted/catalogs.json: the README's, and files, memory, time and git), every case run
// and judged by tests/support/scripted-eval.ts as tests/tool-calling.test.ts does. It must pass every
// case: the model plays each exactly, so any failure is the service's own. Prints a table, then one
// JSON line: cases, passed, per catalog, and the median time to approval.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { projectRoot } from '../../config/paths.ts';
import { runScriptedCase, ScriptedWorld } from '../../tests/support/scripted-eval.ts';
import { scriptedCases, scriptedCatalogs, scriptedModel, substituted } from '../../tests/support/scripted-model.ts';
import type { ScriptedCatalog } from './catalog.ts';
import { keyFor, startEvalService } from './service.ts';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)] ?? 0;

/** Runs the scripted cases of `catalogs` (the quick ones with `quick`); true when every one passed. */
export async function runScriptedEval(options: { catalogs: readonly ScriptedCatalog[]; quick: boolean }): Promise<boolean> {
  const pyBin = execFileSync('bash', [path.join(projectRoot, 'scripts/ensure-mcp-eval-servers.sh'), '--path'], { encoding: 'utf8' }).trim();
  const rows: { id: string; catalog: string; status: string; rounds: number; ms: number; problems: string[] }[] = [];
  for (const catalog of options.catalogs) {
    const scratch = mkdtempSync(path.join(os.tmpdir(), `gws-eval-scripted-${catalog}-`));
    const world = new ScriptedWorld({
      DIR: path.join(scratch, 'share'),
      REPO: path.join(scratch, 'repo'),
      MEMORY_FILE: path.join(scratch, 'memory.jsonl'),
      NODE_MODULES: path.join(projectRoot, 'node_modules'),
      PY_BIN: pyBin,
    });
    world.create();
    const cases = substituted(
      scriptedCases().filter((c) => c.catalog === catalog && (!options.quick || c.quick)),
      world.places,
    );
    const model = await scriptedModel(() => cases);
    const toolServers = substituted(scriptedCatalogs()[catalog], world.places);
    const service = await startEvalService({
      toolServers,
      env: {
        DEFAULT_PROVIDER: 'upstream',
        UPSTREAM_BASE_URL: model.url,
        UPSTREAM_MODEL_MAP: JSON.stringify({
          'svc-workspace': 'scripted-capable',
          'svc-workspace-fast': 'scripted-capable',
          'svc-workspace-quality': 'scripted-capable',
        }),
        EVAL_MEMORY_FILE: world.places.MEMORY_FILE,
      },
    });
    try {
      console.log(
        `eval (scripted): ${cases.length} case(s) on the ${catalog} catalog against npm start at ${service.base} (up in ${service.startSeconds.toFixed(1)} s)`,
      );
      const request = async (method: 'GET' | 'POST', route: string, body?: unknown, headers: Record<string, string> = {}) => {
        const res = await fetch(`${service.base}${route}`, {
          method,
          headers: { authorization: `Bearer ${keyFor(service, method, route)}`, 'content-type': 'application/json', ...headers },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        return { status: res.status, json: await res.json() };
      };
      for (const c of cases) {
        world.reset(c);
        const from = service.deliveries.length;
        const arrived = () => service.deliveries.slice(from).map((d) => d.body ?? {});
        const outcome = await runScriptedCase(request, c, world, arrived, () => model.problems);
        rows.push({ id: c.id, catalog, status: outcome.status, rounds: outcome.rounds, ms: outcome.msToApproval, problems: outcome.problems });
      }
    } finally {
      await service.stop();
      await model.close();
      rmSync(scratch, { recursive: true, force: true });
    }
  }
  const pad = (v: unknown, n: number) => String(v).padEnd(n);
  console.log(`${pad('case', 40)}${pad('result', 7)}${pad('status', 17)}${pad('rounds', 8)}${pad('to approval', 13)}why`);
  for (const r of rows) {
    console.log(
      `${pad(r.id, 40)}${pad(r.problems.length ? 'FAIL' : 'pass', 7)}${pad(r.status, 17)}${pad(r.rounds, 8)}${pad(`${(r.ms / 1000).toFixed(1)} s`, 13)}${r.problems.join('; ')}`,
    );
  }
  const passed = rows.filter((r) => r.problems.length === 0).length;
  const byCatalog = Object.fromEntries(options.catalogs.map((k) => [k, rows.filter((r) => r.catalog === k && r.problems.length === 0).length]));
  const waited = rows.filter((r) => r.rounds > 0).map((r) => r.ms);
  console.log(
    JSON.stringify({
      provider: 'scripted',
      cases: rows.length,
      passed,
      pass_rate: rows.length ? passed / rows.length : 0,
      passed_by_catalog: byCatalog,
      median_to_approval_ms: median(waited),
    }),
  );
  return passed === rows.length;
}
