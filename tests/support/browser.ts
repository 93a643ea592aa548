// Chromium from the OS packages (Debian's `chromium`), driven by playwright-core: no browser is
// downloaded. A watched page records what a page must never do: ask another origin for anything,
// or log a console error or throw.
import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/lib/chromium/chromium'];

export function chromiumPath(): string {
  const found = [process.env.CHROMIUM_PATH, ...CANDIDATES].find((p): p is string => !!p && existsSync(p));
  if (!found) throw new Error("Chromium is missing: install Debian's package (apt-get install chromium) or set CHROMIUM_PATH. .ci/run installs it.");
  return found;
}

export function launchChromium(): Promise<Browser> {
  // --no-sandbox: CI runs as root, where Chromium's sandbox cannot start.
  return chromium.launch({ executablePath: chromiumPath(), args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

export interface WatchedPage {
  page: Page;
  /** Console errors and uncaught exceptions, as the page reported them. */
  errors: string[];
  /** URLs of requests to any origin other than the service's. */
  otherOrigins: string[];
  close(): Promise<void>;
}

export async function watchedPage(browser: Browser, origin: string): Promise<WatchedPage> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors: string[] = [];
  const otherOrigins: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => errors.push(`exception: ${e.message}`));
  page.on('request', (r) => {
    if (new URL(r.url()).origin !== origin) otherOrigins.push(r.url());
  });
  return { page, errors, otherOrigins, close: () => context.close() };
}
