// Two approvers in the inbox (issue 64), in Debian's Chromium against the real API, worker, Temporal
// dev server and Postgres, on `npm start`'s default provider: a core key does not sign in; the first
// approver sees "Approved by you, 1 more needed"; the second sees who approved and completes the run
// with one delivery, and the receipt names both.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../services/keys.ts';
import { setWebhookUrl } from '../services/tenants.ts';
import { launchChromium, type WatchedPage, watchedPage } from './support/browser.ts';
import { webhookReceiver } from './support/fake-servers.ts';
import { isTerminal, newTenant, type RunStack, startRunStack, waitForRun } from './support/run-stack.ts';
import { until } from './support/until.ts';

let stack: RunStack;
let browser: Browser;
let hook: Awaited<ReturnType<typeof webhookReceiver>>;
const pages: WatchedPage[] = [];

beforeAll(async () => {
  stack = await startRunStack({ DEFAULT_PROVIDER: 'embedded' });
  hook = await webhookReceiver();
  browser = await launchChromium();
});
afterAll(async () => {
  for (const p of pages) await p.close();
  await browser?.close();
  await hook?.close();
  await stack?.close();
});

async function openInbox(): Promise<Page> {
  const watched = await watchedPage(browser, new URL(stack.app.url).origin);
  pages.push(watched);
  await watched.page.goto(`${stack.app.url}/inbox`);
  return watched.page;
}

async function signIn(page: Page, key: string) {
  await page.getByLabel('Approver key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

async function approve(page: Page, runId: string) {
  await page.locator(`[data-run-id="${runId}"]`).click();
  await page.getByRole('button', { name: 'Approve', exact: true }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Confirm approval' }).click();
}

describe('two approvers in the inbox', () => {
  it('shows 1 more needed after the first, names who approved, and the second completes the run with one delivery', { timeout: 180_000 }, async () => {
    const db = stack.app.database.db;
    const t = await newTenant(db, 10_000);
    await setWebhookUrl(db, t.name, hook.url, { allowLoopback: true });
    const second = await createKey(db, { tenantId: t.tenantId, kind: 'approver', name: 'Approver Two' });
    const policy = await stack.api.request('PUT', '/v1/approval-policies/tool:webhook_delivery', { body: { required: 2 }, key: t.approverKey });
    expect(policy.status).toBe(200);
    const created = await stack.api.post('/v1/agent-runs', { input: 'Tell the support team that the outage on the billing page is resolved.' }, { key: t.key });
    const runId = created.json.run_id as string;
    const waiting = await waitForRun(stack.api, t.key, runId, (r) => r.status === 'awaiting_approval' || isTerminal(r), 60_000);
    expect(waiting.status).toBe('awaiting_approval');

    // A core key does not sign in: it submits runs and never decides them.
    const first = await openInbox();
    await signIn(first, t.key);
    await expect.poll(() => first.getByRole('alert').textContent()).toContain('approver key');
    await signIn(first, t.approverKey);
    await expect.poll(() => first.locator('.me').textContent()).toBe('Signed in as Approver One');
    await approve(first, runId);
    await expect.poll(() => first.locator('.approvals .needed').textContent()).toBe('Approved by you, 1 more approval needed');
    expect(hook.received).toHaveLength(0);

    const other = await openInbox();
    await signIn(other, second.secret);
    await other.locator(`[data-run-id="${runId}"]`).click();
    await expect.poll(() => other.locator('.approvals .needed').textContent()).toBe('1 more approval needed');
    expect(await other.locator('.approvals li').first().textContent()).toContain('Approver One approved');
    await approve(other, runId);
    const ended = await waitForRun(stack.api, t.key, runId, isTerminal, 60_000);
    expect(ended.status).toBe('completed');
    await until(() => hook.received.length >= 1, 'the delivery');
    expect(hook.received).toHaveLength(1);
    await expect.poll(() => other.locator('.receipt').textContent()).toContain('Approver Two');
    expect(await other.locator('.receipt').textContent()).toContain('Approver One');
    for (const p of pages) expect(p.otherOrigins).toEqual([]);
  });
});
