/**
 * Real Chromium for the web inbox tests: Debian's `chromium` package driven by playwright-core. The
 * tests skip, saying why, only where no Chromium is installed; CI installs it (.ci/run).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BrowserContext, chromium, type Page } from 'playwright-core';

/** Where the browser is: `CHROMIUM_PATH`, else Debian's. */
export const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const haveChromium = existsSync(chromiumPath);
if (!haveChromium) {
  console.warn(
    `Web inbox browser tests skipped: no Chromium at ${chromiumPath} ` +
      '(install Debian\'s "chromium" package, or set CHROMIUM_PATH).',
  );
}

/** Screenshots of every run, for a person to look at (git ignores them). */
export const screenshotDir = fileURLToPath(new URL('./screenshots/', import.meta.url));

/** The one screenshot committed, shown by the README; rewritten with `README_SCREENSHOT=1`. */
export const readmeScreenshot = fileURLToPath(new URL('../../docs/inbox.png', import.meta.url));

// The machine may have no outside network: without these Chromium reaches out to Google's hosts.
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A browser with a fresh profile, one page, and every URL the page requested. */
export interface Browser {
  context: BrowserContext;
  page: Page;
  requested: string[];
  close(): Promise<void>;
}

/** Starts Chromium with a fresh user-data dir; every wait of the page is bounded. */
export async function launchChromium(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'oa-inbox-chromium-'));
  mkdirSync(screenshotDir, { recursive: true });
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    args: ARGS,
    viewport: { width: 1400, height: 860 },
    timeout: 30_000,
  });
  context.setDefaultTimeout(10_000);
  const page = context.pages()[0] ?? (await context.newPage());
  const requested: string[] = [];
  context.on('request', (request) => {
    requested.push(request.url());
  });
  return {
    context,
    page,
    requested,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
