// The approvals inbox (GET /inbox) in a real browser: Debian's Chromium driven by playwright-core,
// against the real API over a socket, a worker, the Temporal dev server and Postgres, with runs
// planned by the embedded model as on `npm start`'s defaults. A receiver records what each approved
// run delivers. Every page is watched: no request to another origin, no console error.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { AxeBuilder } from '@axe-core/playwright';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { setWebhookUrl } from '../services/tenants.ts';
import { launchChromium, type WatchedPage, watchedPage } from './support/browser.ts';
import { webhookReceiver } from './support/fake-servers.ts';
import { isTerminal, newTenant, type RunStack, startRunStack, type TestTenant, waitForRun } from './support/run-stack.ts';
import { until } from './support/until.ts';

const FIRST_RUN = 'Tell the support team that the outage on the billing page is resolved.';
const FIRST_MESSAGE = 'the outage on the billing page is resolved';
const CSP = "default-src 'self'; script-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";
/** Screenshots for docs/inbox.md when UPDATE_SCREENSHOTS=1; a scratch folder otherwise. */
const SHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? path.resolve('docs/inbox') : path.resolve('.tools/inbox-screenshots');

let stack: RunStack;
let browser: Browser;
let hook: Awaited<ReturnType<typeof webhookReceiver>>;
let watched: WatchedPage | undefined;
/** Console errors a test expects, by the status of the response Chromium reports (a 401 at sign-in, a 409). */
let expectedStatusErrors: number[] = [];

beforeAll(async () => {
  stack = await startRunStack({ DEFAULT_PROVIDER: 'embedded' });
  hook = await webhookReceiver();
  browser = await launchChromium();
  mkdirSync(SHOTS, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  await hook?.close();
  await stack?.close();
});

afterEach(async () => {
  if (!watched) return;
  const { errors, otherOrigins } = watched;
  await watched.close();
  watched = undefined;
  const allowed = expectedStatusErrors;
  expectedStatusErrors = [];
  expect(otherOrigins).toEqual([]);
  expect(errors.filter((e) => !allowed.some((status) => e.includes(`status of ${status}`)))).toEqual([]);
});

async function tenant(): Promise<TestTenant> {
  const t = await newTenant(stack.app.database.db, 10_000);
  await setWebhookUrl(stack.app.database.db, t.name, hook.url, { allowLoopback: true });
  return t;
}

async function openInbox(): Promise<Page> {
  watched = await watchedPage(browser, new URL(stack.app.url).origin);
  await watched.page.goto(`${stack.app.url}/inbox`);
  return watched.page;
}

async function signIn(page: Page, key: string) {
  await page.getByLabel('Approver key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page
    .getByRole('status')
    .filter({ hasText: /^Live$/ })
    .waitFor();
}

async function startRun(t: TestTenant, input: string): Promise<string> {
  const reply = await stack.api.post('/v1/agent-runs', { input }, { key: t.key });
  expect(reply.status).toBe(201);
  return (reply.json as { run_id: string }).run_id;
}

const awaitingApproval = (t: TestTenant, runId: string) =>
  waitForRun(stack.api, t.key, runId, (r) => r.status === 'awaiting_approval' || isTerminal(r), 60_000);
const runItem = (page: Page, runId: string) => page.locator(`[data-run-id="${runId}"]`);
const deliveriesOf = (runId: string) => hook.received.filter((d) => (d.body as { run_id?: string }).run_id === runId);

async function confirmDecision(page: Page, decision: 'approve' | 'reject', reason?: string) {
  if (reason) await page.getByLabel('Reason').fill(reason);
  await page.getByRole('button', { name: decision === 'approve' ? 'Approve' : 'Reject', exact: true }).click();
  await page
    .getByRole('dialog')
    .getByRole('button', { name: decision === 'approve' ? 'Confirm approval' : 'Confirm rejection' })
    .click();
}

describe('the inbox page', () => {
  it('is served by the API with its own assets, a strict CSP, nosniff and no referrer, under 100 KB gzipped in all', async () => {
    const page = await fetch(`${stack.app.url}/inbox`);
    const html = await page.text();
    expect(page.status).toBe(200);
    for (const response of [page, await fetch(`${stack.app.url}/inbox/assets/app.js`)]) {
      expect(response.headers.get('content-security-policy')).toBe(CSP);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('referrer-policy')).toBe('no-referrer');
    }
    // Every asset is of this origin: no CDN, no inline script.
    const sources = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(sources.length).toBeGreaterThanOrEqual(3);
    for (const source of sources) expect(source).toMatch(/^\/inbox\/assets\/[\w.-]+$/);
    expect(html).not.toMatch(/<script>|<script [^>]*>[^<]/);
    let total = gzipSync(html).length;
    for (const source of sources) {
      const asset = await fetch(`${stack.app.url}${source}`);
      expect(asset.status).toBe(200);
      total += gzipSync(Buffer.from(await asset.arrayBuffer())).length;
    }
    expect(total).toBeLessThan(100 * 1024);
  });

  it('is listed in the OpenAPI document as an extension page', async () => {
    const doc = (await stack.api.get('/openapi.json')).json as { paths: Record<string, unknown> };
    expect(doc.paths['/inbox']).toBeDefined();
    expect(doc.paths['/v1/agent-runs/events']).toBeDefined();
    expect(doc.paths['/v1/agent-runs/{run_id}/approval/preview']).toBeDefined();
  });

  it('runs no script it was not served: the browser enforces the CSP on an injected inline script', async () => {
    const page = await openInbox();
    // Chromium reports the refused inline script as a console error: that is the CSP working.
    await page.addScriptTag({ content: 'window.__inline = 1' }).catch(() => {});
    expect(await page.evaluate(() => (window as { __inline?: number }).__inline)).toBeUndefined();
    expect(watched!.errors.join('\n')).toContain('Content Security Policy');
    watched!.errors.length = 0;
  });
});

describe('signing in', () => {
  it('refuses a wrong key, keeps the right one in sessionStorage only, and forgets it on sign-out', async () => {
    const t = await tenant();
    const page = await openInbox();
    expect(await page.title()).toBe('Approvals inbox · Governed Workspace Service');
    await page.screenshot({ path: path.join(SHOTS, 'sign-in.png') });
    expectedStatusErrors = [401];
    await page.getByLabel('Approver key').fill('gws_core_not-a-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('not accepted');

    await signIn(page, t.approverKey);
    expect(page.url()).toBe(`${stack.app.url}/inbox`);
    const stored = await page.evaluate(() => ({ session: { ...sessionStorage }, local: { ...localStorage }, cookie: document.cookie }));
    expect(Object.values(stored.session)).toEqual([t.approverKey]);
    expect(stored.local).toEqual({});
    expect(stored.cookie).toBe('');
    expect(await page.context().cookies()).toEqual([]);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Approver key').waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
  });
});

describe("the README's first run, approved in the inbox", () => {
  it('appears live with its message and digest, is approved with a reason, completes, shows its receipt, and delivers once', { timeout: 120_000 }, async () => {
    const t = await tenant();
    const page = await openInbox();
    await signIn(page, t.approverKey);
    const runId = await startRun(t, FIRST_RUN);
    const waiting = await awaitingApproval(t, runId);
    expect(waiting.status).toBe('awaiting_approval');
    // Live: within 2 s of the run waiting, without a reload.
    await runItem(page, runId).waitFor({ timeout: 2_000 });
    await runItem(page, runId).click();
    const effect = waiting.approval.effects[0];
    await expect.poll(() => page.locator('blockquote.message').textContent()).toBe(FIRST_MESSAGE);
    expect(await page.locator('pre.arguments').textContent()).toBe(JSON.stringify(effect.arguments, null, 2));
    expect(await page.locator('code.digest').first().textContent()).toBe(effect.args_digest);
    expect(await page.getByText(effect.why).count()).toBeGreaterThan(0);
    await page.screenshot({ path: path.join(SHOTS, 'run-awaiting-approval.png'), fullPage: true });

    await page.getByLabel('Reason').fill('checked the billing page');
    await page.getByRole('button', { name: 'Approve', exact: true }).click();
    await page.getByRole('dialog').waitFor();
    await page.screenshot({ path: path.join(SHOTS, 'confirm-approval.png') });
    await page.getByRole('dialog').getByRole('button', { name: 'Confirm approval' }).click();

    // Progress live to the end, then the receipt.
    await page.locator('.receipt').waitFor({ timeout: 60_000 });
    const run = await waitForRun(stack.api, t.key, runId, isTerminal);
    expect(run.status).toBe('completed');
    expect(run.approval.decision_reason).toBe('checked the billing page');
    expect(await page.locator('.receipt .verification').textContent()).toBe(run.receipt.verification_class);
    expect(await page.locator('.receipt').textContent()).toContain('webhook_delivery:step_1');
    await page.screenshot({ path: path.join(SHOTS, 'receipt.png'), fullPage: true });
    await until(() => deliveriesOf(runId).length === 1, 'the delivery');
    expect((deliveriesOf(runId)[0]!.body as { message: string }).message).toBe(FIRST_MESSAGE);
    // Exactly once, however long we look.
    await waitForRun(stack.api, t.key, runId, (r) => r.receipt !== null);
    expect(deliveriesOf(runId)).toHaveLength(1);
  });
});

describe('deciding', () => {
  it('rejects: the run does not complete and nothing is delivered', { timeout: 120_000 }, async () => {
    const t = await tenant();
    const runId = await startRun(t, 'Let the warehouse team know that the loading dock is closed today.');
    await awaitingApproval(t, runId);
    const page = await openInbox();
    await signIn(page, t.approverKey);
    await runItem(page, runId).click();
    await confirmDecision(page, 'reject', 'not today');
    await page.locator('.receipt').waitFor({ timeout: 60_000 });
    const run = await waitForRun(stack.api, t.key, runId, isTerminal);
    expect(run.status).not.toBe('completed');
    expect(run.approval.state).toBe('rejected');
    expect(run.receipt.action_boundary.effects_performed).toEqual([]);
    expect(await page.locator('.receipt').textContent()).toContain('webhook_delivery:step_1');
    expect(deliveriesOf(runId)).toHaveLength(0);
  });

  it('edits the message: the API checks it, the page shows the new digest, and the edited message is what is delivered', { timeout: 120_000 }, async () => {
    const t = await tenant();
    const runId = await startRun(t, FIRST_RUN);
    const waiting = await awaitingApproval(t, runId);
    const proposed = waiting.approval.effects[0].args_digest as string;
    const page = await openInbox();
    await signIn(page, t.approverKey);
    await runItem(page, runId).click();

    await page.getByRole('button', { name: 'Edit arguments' }).click();
    const editor = page.getByLabel('Arguments of step_1 (JSON)');
    // A field the tool's schema does not take is refused, naming it; nothing is decided.
    expectedStatusErrors = [400];
    await editor.fill(JSON.stringify({ message: 'x', channel: 'all' }));
    await page.getByRole('button', { name: 'Check edit' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('edits[0].arguments');
    // While an edit is open and unchecked, approving waits for it.
    expect(await page.getByRole('button', { name: 'Approve', exact: true }).isDisabled()).toBe(true);

    const edited = 'the billing page is back; details at 10:00';
    // The call's own arguments (its audience among them) with the message changed, as a person edits them.
    const editedArgs = { ...waiting.approval.effects[0].arguments, message: edited };
    await editor.fill(JSON.stringify(editedArgs));
    await page.getByRole('button', { name: 'Check edit' }).click();
    await page.locator('.edited').waitFor();
    const preview = await stack.api.post(`/v1/agent-runs/${runId}/approval/preview`, { edits: [{ step_id: 'step_1', arguments: editedArgs }] }, { key: t.key });
    const newDigest = (preview.json as { effects: { args_digest: string }[] }).effects[0]!.args_digest;
    expect(newDigest).not.toBe(proposed);
    await expect.poll(() => page.locator('.edited').textContent()).toContain(newDigest);
    expect(await page.locator('.edited').textContent()).toContain(proposed);
    expect(await page.locator('.edited blockquote.message').textContent()).toBe(edited);
    await page.screenshot({ path: path.join(SHOTS, 'edited-message.png'), fullPage: true });

    await page.getByRole('button', { name: 'Approve', exact: true }).click();
    expect(await page.getByRole('dialog').textContent()).toContain(newDigest);
    await page.getByRole('dialog').getByRole('button', { name: 'Confirm approval' }).click();
    await page.locator('.receipt').waitFor({ timeout: 60_000 });
    const run = await waitForRun(stack.api, t.key, runId, isTerminal);
    expect(run.status).toBe('completed');
    expect(run.receipt.digests['args:step_1']).toBe(newDigest);
    expect(run.receipt.digests['proposed_args:step_1']).toBe(proposed);
    await until(() => deliveriesOf(runId).length === 1, 'the delivery');
    expect((deliveriesOf(runId)[0]!.body as { message: string }).message).toBe(edited);
  });

  it('a decision made elsewhere meanwhile: the page shows the run as it is now, not an error, and decides nothing', { timeout: 120_000 }, async () => {
    const t = await tenant();
    const runId = await startRun(t, FIRST_RUN);
    await awaitingApproval(t, runId);
    const page = await openInbox();
    await signIn(page, t.approverKey);
    await runItem(page, runId).click();
    await page.getByRole('button', { name: 'Approve', exact: true }).click();
    await page.getByRole('dialog').waitFor();
    // Someone rejects it with the CLI or the API while this operator reads the confirmation.
    const elsewhere = await stack.api.post(`/v1/agent-runs/${runId}/approval`, { decision: 'reject', reason: 'decided elsewhere' }, { key: t.approverKey });
    expect(elsewhere.status).toBe(200);
    expectedStatusErrors = [409];
    await page.getByRole('dialog').getByRole('button', { name: 'Confirm approval' }).click();
    await expect.poll(() => page.locator('.notice').textContent()).toContain('decided or changed elsewhere');
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(await page.locator('.approval-state').textContent()).toBe('approval rejected');
    const run = await waitForRun(stack.api, t.key, runId, isTerminal);
    expect(run.approval.state).toBe('rejected');
    expect(deliveriesOf(runId)).toHaveLength(0);
  });

  it('a run decided elsewhere leaves the waiting list within 2 s', { timeout: 120_000 }, async () => {
    const t = await tenant();
    const runId = await startRun(t, FIRST_RUN);
    await awaitingApproval(t, runId);
    const page = await openInbox();
    await signIn(page, t.approverKey);
    await runItem(page, runId).waitFor();
    const reply = await stack.api.post(`/v1/agent-runs/${runId}/approval`, { decision: 'approve' }, { key: t.approverKey });
    expect(reply.status).toBe(200);
    await page.locator('[aria-labelledby="decided-heading"]').locator(`[data-run-id="${runId}"]`).waitFor({ timeout: 2_000 });
    expect(await page.locator('[aria-labelledby="waiting-heading"]').locator(`[data-run-id="${runId}"]`).count()).toBe(0);
  });

  it('keys: j and k move through the list, r asks to reject, Escape cancels, Enter confirms', { timeout: 120_000 }, async () => {
    const t = await tenant();
    const older = await startRun(t, FIRST_RUN);
    await awaitingApproval(t, older);
    const newer = await startRun(t, 'Tell the night shift that the backup finished.');
    await awaitingApproval(t, newer);
    const page = await openInbox();
    await signIn(page, t.approverKey);
    await runItem(page, older).waitFor();
    const current = () => page.locator('[aria-current="true"]').getAttribute('data-run-id');
    expect(await current()).toBe(newer); // newest first, and selected
    await page.keyboard.press('j');
    expect(await current()).toBe(older);
    await page.keyboard.press('k');
    expect(await current()).toBe(newer);
    await page.keyboard.press('a');
    await expect.poll(() => page.getByRole('dialog').textContent()).toContain('Approve run');
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
    // Escape cancels with the focus outside the dialog too (a click on the backdrop).
    await page.keyboard.press('a');
    await page.locator('.backdrop').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
    await page.keyboard.press('r');
    await expect.poll(() => page.getByRole('dialog').textContent()).toContain('Reject run');
    await page.keyboard.press('Enter');
    const run = await waitForRun(stack.api, t.key, newer, isTerminal);
    expect(run.approval.state).toBe('rejected');
    expect((await stack.api.get(`/v1/agent-runs/${older}`, { key: t.key })).json).toMatchObject({ status: 'awaiting_approval' });
    // Typing a reason does not trigger the keys.
    await page.locator(`[data-run-id="${older}"]`).click();
    await page.getByLabel('Reason').fill('a r j k');
    expect(await page.getByRole('dialog').count()).toBe(0);
  });
});

describe('untrusted content', () => {
  const HOSTILE = 'Tell the on-call channel that <img src=x onerror="window.__pwned=1"> and <script>window.__pwned=2</script> were seen.';

  it('shows script and img markup from the input, the arguments and an edit literally, and never runs it', { timeout: 120_000 }, async () => {
    const t = await tenant();
    const runId = await startRun(t, HOSTILE);
    const waiting = await awaitingApproval(t, runId);
    expect(JSON.stringify(waiting.approval.effects[0].arguments)).toContain('<script>');
    const page = await openInbox();
    await signIn(page, t.approverKey);
    await runItem(page, runId).click();
    await page.locator('blockquote.message').waitFor();
    expect(await page.locator('blockquote.input').textContent()).toBe(HOSTILE);
    expect(await page.locator('blockquote.message').textContent()).toContain('<img src=x onerror="window.__pwned=1">');
    expect(await page.locator('pre.arguments').textContent()).toContain('<script>window.__pwned=2</script>');
    expect(await runItem(page, runId).textContent()).toContain('<img src=x');

    await page.getByRole('button', { name: 'Edit arguments' }).click();
    const hostileEdit = { ...waiting.approval.effects[0].arguments, message: '<img src=y onerror="window.__pwned=3"><b>bold</b>' };
    await page.getByLabel('Arguments of step_1 (JSON)').fill(JSON.stringify(hostileEdit));
    await page.getByRole('button', { name: 'Check edit' }).click();
    await page.locator('.edited').waitFor();
    expect(await page.locator('.edited blockquote.message').textContent()).toBe('<img src=y onerror="window.__pwned=3"><b>bold</b>');

    // Nothing of it became markup, and nothing ran.
    expect(await page.locator('#app img, #app script, #app b').count()).toBe(0);
    expect(await page.evaluate(() => (window as { __pwned?: number }).__pwned)).toBeUndefined();
  });
});

describe('accessibility', () => {
  it('has no serious or critical axe-core violation on the sign-in page, a run, and the confirmation', { timeout: 120_000 }, async () => {
    const t = await tenant();
    const runId = await startRun(t, FIRST_RUN);
    await awaitingApproval(t, runId);
    const page = await openInbox();
    const serious = async () =>
      (await new AxeBuilder({ page }).analyze()).violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.help}`);
    expect(await serious()).toEqual([]);
    await signIn(page, t.approverKey);
    await runItem(page, runId).click();
    await page.locator('blockquote.message').waitFor();
    expect(await serious()).toEqual([]);
    await page.getByRole('button', { name: 'Reject', exact: true }).click();
    await page.getByRole('dialog').waitFor();
    expect(await serious()).toEqual([]);
  });
});
