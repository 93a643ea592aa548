// `npm start` as a developer runs it: embedded PGlite, the Temporal dev server
// it starts itself, dev keys on first start, and Ctrl-C (SIGINT to the process
// group) leaving no process behind. A second start reuses data and keys.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, describe, expect, it } from 'vitest';
import { launchChromium, watchedPage } from './support/browser.ts';
import { webhookReceiver } from './support/fake-servers.ts';
import { freePort } from './support/free-port.ts';
import { type Started, startNpmStart } from './support/npm-start.ts';

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gws-start-'));
/** Process groups this file started; whatever a failed or timed-out test leaves is killed in afterAll. */
const groups: number[] = [];
// Longer than npmStart's wait (150 s) plus ctrlC's (40 s), so the test's own checks report, not vitest's timeout.
const START_TEST_TIMEOUT_MS = 240_000;
const ports = { api: 0, temporal: 0, ui: 0 };

/** Free ports can be taken between picking and binding (other processes here bind random ports): retry with new ones. */
async function npmStart(): Promise<Started> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await npmStartOnce();
    } catch (err) {
      if (attempt >= 3 || !/EADDRINUSE|address already in use/i.test((err as Error).message)) throw err;
      ports.api = await freePort();
      ports.temporal = await freePort();
      ports.ui = await freePort();
    }
  }
}

async function npmStartOnce(): Promise<Started> {
  const env = { ...process.env };
  delete env.DATABASE_URL;
  delete env.TEMPORAL_ADDRESS;
  Object.assign(env, {
    DATA_DIR: dataDir,
    PORT: String(ports.api),
    TEMPORAL_DEV_PORT: String(ports.temporal),
    TEMPORAL_UI_PORT: String(ports.ui),
    LOG_LEVEL: 'warn',
  });
  return startNpmStart(env, groups);
}

/** Every process whose command line names our data dir (the Temporal dev server's does). */
function processesUsing(dir: string): string[] {
  try {
    return execFileSync('pgrep', ['-f', dir], { encoding: 'utf8' }).trim().split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

function groupMembers(pgid: number): string[] {
  try {
    return execFileSync('ps', ['-o', 'pid=', '-g', String(pgid)], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .filter(Boolean);
  } catch {
    return [];
  }
}

/** Ctrl-C: SIGINT to the whole group. Resolves with the service's log once every process is gone. */
async function ctrlC(started: Started): Promise<string> {
  const pgid = started.child.pid!;
  process.kill(-pgid, 'SIGINT');
  // npm itself dies of the SIGINT at once; the service behind it drains first.
  const deadline = Date.now() + 40_000;
  while ((groupMembers(pgid).length > 0 || processesUsing(dataDir).length > 0) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 250));
  }
  expect(groupMembers(pgid), 'processes left in the npm start process group').toEqual([]);
  expect(processesUsing(dataDir), 'Temporal dev server left running').toEqual([]);
  return started.output();
}

describe('npm start', () => {
  let coreKey = '';
  let approverKey = '';
  afterAll(() => {
    for (const pgid of groups) {
      try {
        process.kill(-pgid, 'SIGKILL');
      } catch {} // already gone, as it should be
    }
    for (const pid of processesUsing(dataDir)) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {}
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it(
    'starts everything on embedded defaults and prints the dev keys once',
    async () => {
      ports.api = await freePort();
      ports.temporal = await freePort();
      ports.ui = await freePort();
      const started = await npmStart();
      try {
        const out = started.output();
        coreKey = /core\s+(gws_core_\S+)/.exec(out)?.[1] ?? '';
        const workspaceKey = /workspace\s+(gws_ws_\S+)/.exec(out)?.[1] ?? '';
        approverKey = /approver\s+(gws_apv_\S+)/.exec(out)?.[1] ?? '';
        expect(coreKey).toMatch(/^gws_core_/);
        expect(workspaceKey).toMatch(/^gws_ws_/);
        expect(approverKey).toMatch(/^gws_apv_/);
        expect(out).toContain(`export GWS_API_KEY=${coreKey}`); // the README's first step
        expect(out).toContain(`export GWS_APPROVER_KEY=${approverKey}`); // the key the inbox and `gws approve` take
        expect(out).toContain(`http://127.0.0.1:${ports.api}/docs`);
        expect(out).toContain(`Inbox        http://127.0.0.1:${ports.api}/inbox`);
        expect(out).toContain(`Temporal UI  http://127.0.0.1:${ports.ui}`);

        const base = `http://127.0.0.1:${ports.api}`;
        expect((await fetch(`${base}/health`)).status).toBe(200);
        expect((await fetch(`${base}/v1/models`, { headers: { authorization: `Bearer ${coreKey}` } })).status).toBe(200);
        expect((await fetch(`${base}/v1/models`, { headers: { authorization: `Bearer ${workspaceKey}` } })).status).toBe(401);
        expect((await fetch(`http://127.0.0.1:${ports.ui}/`)).status).toBe(200);

        // Payloads are encrypted with a key generated on first start and kept in DATA_DIR (0600);
        // the dev server's UI decodes them through the API's codec endpoint.
        const keyFile = path.join(dataDir, 'payload-key.json');
        expect(statSync(keyFile).mode & 0o777).toBe(0o600);
        const keyId = JSON.parse(readFileSync(keyFile, 'utf8')).id as string;
        expect(out).toContain(`Payloads     encrypted, key ${keyId}`);
        expect(out).toContain(`Codec        http://127.0.0.1:${ports.api}/codec`);
        const settings = await (await fetch(`http://127.0.0.1:${ports.ui}/api/v1/settings`)).json();
        expect(settings.Codec.Endpoint).toBe(`http://127.0.0.1:${ports.api}/codec`);
        const uiOrigin = `http://127.0.0.1:${ports.ui}`;
        const preflight = await fetch(`${base}/codec/decode`, { method: 'OPTIONS', headers: { origin: uiOrigin, 'access-control-request-method': 'POST' } });
        expect(preflight.headers.get('access-control-allow-origin')).toBe(uiOrigin);

        // The embedded model serves the aliases (its file comes with npm install): a chat answer is real model text.
        expect(out).toMatch(/Models {7}svc-workspace\* served by embedded; embedded model SmolLM2-135M-Instruct\.Q4_1/);
        const json = { authorization: `Bearer ${coreKey}`, 'content-type': 'application/json' };
        const chat = await (
          await fetch(`${base}/v1/chat/completions`, {
            method: 'POST',
            headers: json,
            body: JSON.stringify({ model: 'svc-workspace', messages: [{ role: 'user', content: 'What is the capital of France?' }], max_tokens: 32 }),
          })
        ).json();
        expect(chat.choices[0].message.content.trim().length).toBeGreaterThan(0);
        expect(chat.usage.completion_tokens).toBeGreaterThan(0);

        // A whole run on embedded PGlite, planned by the model: ledger, projection, journey, receipt.
        const created = await (
          await fetch(`${base}/v1/agent-runs`, {
            method: 'POST',
            headers: json,
            body: JSON.stringify({ input: 'Review the open work; then list the oldest items.', memory: true }),
          })
        ).json();
        let run = created;
        for (let i = 0; i < 600 && !['completed', 'failed', 'needs_attention'].includes(run.status); i++) {
          await new Promise((r) => setTimeout(r, 200));
          run = await (await fetch(`${base}/v1/agent-runs/${created.run_id}`, { headers: json })).json();
        }
        expect(run.estimate).toMatchObject({ provider: 'embedded', served_model: 'SmolLM2-135M-Instruct.Q4_1' });
        expect(run.usage).toMatchObject({ usage_basis: 'reported', model_calls: expect.any(Number) });
        expect(run.usage.model_calls).toBeGreaterThan(0);
        expect(run.usage.charged).toBeGreaterThan(0);
        // A tiny model: whatever it planned, the run claims only what was done and checked.
        if (run.status === 'completed') expect(run.receipt.actions.every((a: { outcome: string }) => a.outcome === 'performed')).toBe(true);
        else expect(run.status).toBe('needs_attention');

        const connection = await Connection.connect({ address: `127.0.0.1:${ports.temporal}` });
        const attrs = await connection.operatorService.listSearchAttributes({ namespace: 'default' });
        // The run's input, as Temporal stores it: encrypted; the codec endpoint gives it back to the UI.
        const history = await new Client({ connection }).workflow.getHandle(run.run_id).fetchHistory();
        const input = history.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
        expect(Buffer.from(input.data!).toString('utf8')).not.toContain('Review the open work');
        const b64 = (v: Uint8Array) => Buffer.from(v).toString('base64');
        const asJson = { metadata: Object.fromEntries(Object.entries(input.metadata!).map(([k, v]) => [k, b64(v)])), data: b64(input.data!) };
        const decoded = await (
          await fetch(`${base}/codec/decode`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', origin: uiOrigin, 'x-namespace': 'default' },
            body: JSON.stringify({ payloads: [asJson] }),
          })
        ).json();
        expect(Buffer.from(decoded.payloads[0].data, 'base64').toString('utf8')).toContain('Review the open work');
        await connection.close();
        expect(Object.keys(attrs.customAttributes ?? {})).toEqual(expect.arrayContaining(['RunStatus', 'TenantId']));
      } finally {
        const log = await ctrlC(started);
        expect(log).not.toContain('shutdown step failed');
        expect(log).not.toContain('shutdown timed out');
      }
    },
    START_TEST_TIMEOUT_MS,
  );

  it(
    "serves the inbox it prints: the README's first run appears live, is approved in Chromium, completes and shows its receipt",
    async () => {
      expect(coreKey).not.toBe('');
      expect(approverKey).not.toBe('');
      const hook = await webhookReceiver();
      const started = await npmStart();
      const browser = await launchChromium();
      try {
        const base = `http://127.0.0.1:${ports.api}`;
        const inboxUrl = /Inbox {8}(\S+)/.exec(started.output())?.[1];
        expect(inboxUrl).toBe(`${base}/inbox`);
        // The README's webhook step, beside the running service.
        const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
        delete env.DATABASE_URL;
        execFileSync('npm', ['run', '--silent', 'tenants', '--', 'webhook', 'set', '--tenant', 'dev', '--url', hook.url], { env, encoding: 'utf8' });

        const { page, errors, otherOrigins } = await watchedPage(browser, base);
        await page.goto(inboxUrl!);
        await page.getByLabel('Approver key').fill(approverKey);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page
          .getByRole('status')
          .filter({ hasText: /^Live$/ })
          .waitFor();
        const input = 'Tell the support team that the outage on the billing page is resolved.';
        const created = await (
          await fetch(`${base}/v1/agent-runs`, {
            method: 'POST',
            headers: { authorization: `Bearer ${coreKey}`, 'content-type': 'application/json' },
            body: JSON.stringify({ input }),
          })
        ).json();
        const item = page.locator(`[data-run-id="${created.run_id}"]`);
        await item.waitFor({ timeout: 60_000 });
        await item.click();
        await expect.poll(() => page.locator('blockquote.message').textContent()).toBe('the outage on the billing page is resolved');
        // The core key that submitted the run cannot decide it: 401, and the run keeps waiting.
        const byCore = await fetch(`${base}/v1/agent-runs/${created.run_id}/approval`, {
          method: 'POST',
          headers: { authorization: `Bearer ${coreKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ decision: 'approve' }),
        });
        expect(byCore.status).toBe(401);
        const waiting = await (await fetch(`${base}/v1/agent-runs/${created.run_id}`, { headers: { authorization: `Bearer ${coreKey}` } })).json();
        expect(waiting.status).toBe('awaiting_approval');
        await page.getByLabel('Reason').fill('checked');
        await page.getByRole('button', { name: 'Approve', exact: true }).click();
        await page.getByRole('dialog').getByRole('button', { name: 'Confirm approval' }).click();
        await page.locator('.receipt').waitFor({ timeout: 60_000 });
        const run = await (await fetch(`${base}/v1/agent-runs/${created.run_id}`, { headers: { authorization: `Bearer ${coreKey}` } })).json();
        expect(run.status).toBe('completed');
        expect(run.receipt.action_boundary.approved_by).toEqual([expect.objectContaining({ name: 'Dev Approver', key_id: expect.stringMatching(/^key_/) })]);
        expect(await page.locator('.receipt .verification').textContent()).toBe(run.receipt.verification_class);
        expect(hook.received.filter((d) => (d.body as { run_id: string }).run_id === created.run_id)).toHaveLength(1);
        expect(otherOrigins).toEqual([]);
        expect(errors).toEqual([]);
      } finally {
        await browser.close();
        await hook.close();
        expect(await ctrlC(started)).not.toContain('shutdown step failed');
      }
    },
    START_TEST_TIMEOUT_MS,
  );

  it(
    'reuses the data and keys on a second start, and stops cleanly again',
    async () => {
      expect(coreKey).not.toBe('');
      const started = await npmStart();
      try {
        expect(started.output()).toContain('Dev keys were printed when they were created');
        // The same payload key as the first start: its histories stay readable.
        expect(started.output()).toContain(`Payloads     encrypted, key ${JSON.parse(readFileSync(path.join(dataDir, 'payload-key.json'), 'utf8')).id}`);
        expect(started.output()).not.toMatch(/gws_(core|ws|apv)_\S{43}/);
        const r = await fetch(`http://127.0.0.1:${ports.api}/v1/models`, { headers: { authorization: `Bearer ${coreKey}` } });
        expect(r.status).toBe(200);
      } finally {
        expect(await ctrlC(started)).not.toContain('shutdown step failed');
      }
    },
    START_TEST_TIMEOUT_MS,
  );

  /** Until no process of `pids` runs, at most `withinMs`. */
  async function gone(pids: number[], withinMs = 40_000): Promise<boolean> {
    const running = () =>
      pids.filter((pid) => {
        try {
          process.kill(pid, 0);
          return !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ');
        } catch {
          return false;
        }
      });
    const deadline = Date.now() + withinMs;
    while (running().length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    return running().length === 0;
  }

  /** The npm process, the service under it, and the dev server (which has its own process group). */
  function treeOf(started: Started): number[] {
    const npm = started.child.pid!;
    const members = groupMembers(npm).map(Number);
    return [...new Set([npm, ...members, ...processesUsing(dataDir).map(Number)])];
  }

  it.each(['SIGTERM', 'SIGINT'] as const)(
    'stops everything cleanly on %s sent to the npm process alone, as Ctrl-C does',
    async (signal) => {
      const started = await npmStart();
      const tree = treeOf(started);
      expect(tree.length).toBeGreaterThanOrEqual(3);
      process.kill(started.child.pid!, signal);
      expect(await gone(tree), `processes left after ${signal} to npm`).toBe(true);
      expect(processesUsing(dataDir)).toEqual([]);
      expect(started.output()).not.toContain('shutdown step failed');
      // The ports are free again: a new start comes up on them.
      const again = await npmStart();
      await ctrlC(again);
    },
    START_TEST_TIMEOUT_MS,
  );

  it(
    'starts again after a kill -9 of npm start, stopping the dev server the killed one left running',
    async () => {
      const started = await npmStart();
      const devServers = processesUsing(dataDir).map(Number);
      expect(devServers).toHaveLength(1);
      // kill -9 of npm and the service: the dev server, in its own process group, is left behind.
      for (const pid of groupMembers(started.child.pid!).map(Number)) process.kill(pid, 'SIGKILL');
      expect(await gone([started.child.pid!])).toBe(true);
      expect(processesUsing(dataDir).map(Number)).toEqual(devServers);

      const again = await npmStart();
      expect(await gone(devServers)).toBe(true);
      expect(again.output()).toContain('stopping the Temporal dev server a previous npm start left running');
      const r = await fetch(`http://127.0.0.1:${ports.api}/health`);
      expect(r.status).toBe(200);
      await ctrlC(again);
    },
    START_TEST_TIMEOUT_MS,
  );

  it(
    'leaves alone a Temporal server it did not start, and says which variable to set',
    async () => {
      const cli = execFileSync('bash', ['scripts/ensure-temporal-cli.sh', '--path'], { encoding: 'utf8' }).trim();
      const foreign = spawn(
        cli,
        ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(ports.temporal), '--ui-port', String(await freePort()), '--headless'],
        { stdio: 'ignore' },
      );
      try {
        const deadline = Date.now() + 60_000;
        for (;;) {
          const up = await fetch(`http://127.0.0.1:${ports.temporal}`).then(
            () => true,
            (e: { cause?: { code?: string } }) => e.cause?.code !== 'ECONNREFUSED',
          );
          if (up) break;
          if (Date.now() > deadline) throw new Error('the foreign server never listened');
          await new Promise((r) => setTimeout(r, 200));
        }
        const error = await npmStart().then(
          () => null,
          (e: Error) => e.message,
        );
        expect(error).toContain(`A Temporal server already answers at 127.0.0.1:${ports.temporal}`);
        expect(error).toContain('TEMPORAL_DEV_PORT');
        expect(foreign.exitCode).toBeNull();
      } finally {
        foreign.kill('SIGKILL');
      }
    },
    START_TEST_TIMEOUT_MS,
  );
});
