// `npm run check:docs -- <baseUrl> [--token <bearer>] [--screenshot <file>]`: loads /docs in a real
// headless Chromium, scrolls through Swagger UI's (virtualised) list to see every operation
// rendered, tries a public operation (and GET /api/users/me when a token is given), and saves a
// screenshot. Fails on console errors, CSP
// violations, failed requests and any request that leaves the service (no CDN).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, openSync, closeSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Page } from 'playwright-core';
import { repoRoot } from '../lib/config.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export interface DocsCheckResult {
  /** Operations in /openapi.json, and operation blocks Swagger UI rendered. */
  expectedOperations: number;
  renderedOperations: number;
  expectedTags: string[];
  renderedTags: string[];
  /** The security schemes the Authorize dialog lists (e.g. "bearer  (http, Bearer)"). */
  authSchemes: string[];
  /** Status codes shown by try-it-out: GET /healthz, and GET /api/users/me with the token. */
  tryItOut: Record<string, string>;
  consoleErrors: string[];
  cspViolations: string[];
  failedRequests: string[];
  externalRequests: string[];
  screenshot: string;
  problems: string[];
}

/** Debian's chromium, installed with apt-get when missing and we are root (logged to .data/). */
export function ensureChromium(log: (msg: string) => void = () => {}): string {
  if (existsSync(CHROMIUM)) return CHROMIUM;
  if (process.getuid?.() !== 0 || !existsSync('/etc/debian_version')) {
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (or set CHROMIUM_PATH)`);
  }
  const logFile = join(repoRoot, '.data', 'chromium-install.log');
  mkdirSync(dirname(logFile), { recursive: true });
  log(`installing chromium with apt-get (log: ${logFile})`);
  const fd = openSync(logFile, 'a');
  // Wait for the dpkg lock rather than fail: other processes on the machine may be installing too.
  const apt = (...args: string[]) =>
    spawnSync('apt-get', ['-o', 'DPkg::Lock::Timeout=600', ...args], {
      stdio: ['ignore', fd, fd],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    }).status;
  try {
    // A fresh machine may have no package lists yet; update only when the first attempt fails.
    if (apt('install', '-y', '--no-install-recommends', 'chromium') !== 0) {
      apt('update');
      if (apt('install', '-y', '--no-install-recommends', 'chromium') !== 0)
        throw new Error(`apt-get install chromium failed; see ${logFile}`);
    }
  } finally {
    closeSync(fd);
  }
  if (!existsSync(CHROMIUM)) throw new Error(`chromium installed but ${CHROMIUM} is missing; see ${logFile}`);
  return CHROMIUM;
}

// The closed network refuses Chromium's background traffic (updates, sync, QUIC probes), which
// would otherwise show up as failed requests or stall start-up.
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

// Swagger UI virtualises the operation list once it has 150 entries (tags and operations): only
// blocks near the viewport are in the DOM. So the checks scroll the page through, as a reader would.

// Page scripts as strings: this file is compiled without the DOM library.
const TO_TOP = 'window.scrollTo(0, 0)';
const NEXT_SCREEN = '(window.scrollBy(0, Math.floor(window.innerHeight * 0.8)), window.scrollY)';

/** Scrolls from the top to the bottom, collecting the operation blocks and tags that get rendered. */
async function scrollThrough(
  page: Page,
  settleMs = 60,
  operations = new Set<string>(),
  tags = new Set<string>(),
): Promise<{ operations: Set<string>; tags: Set<string> }> {
  await page.evaluate(TO_TOP);
  for (let last = -1; ;) {
    await page.waitForTimeout(settleMs); // a frame or two for the virtualiser to render the new window
    for (const id of await page.locator('.opblock[id]').evaluateAll((els) => els.map((e) => e.id))) operations.add(id);
    for (const tag of await page
      .locator('.opblock-tag[data-tag]')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-tag') ?? '')))
      tags.add(tag);
    const y = await page.evaluate<number>(NEXT_SCREEN);
    if (y === last) break;
    last = y;
  }
  await page.evaluate(TO_TOP);
  return { operations, tags };
}

/** Scrolls down until the block is rendered (it may be far below the fold). */
async function scrollToBlock(page: Page, blockId: string): Promise<void> {
  const block = page.locator(`#${blockId}`);
  await page.evaluate(TO_TOP);
  for (let last = -1; (await block.count()) === 0;) {
    const y = await page.evaluate<number>(NEXT_SCREEN);
    if (y === last) throw new Error(`${blockId} is not on the page`);
    last = y;
    await page.waitForTimeout(60);
  }
  await block.scrollIntoViewIfNeeded();
}

async function tryOperation(page: Page, blockId: string): Promise<string> {
  await scrollToBlock(page, blockId);
  const block = page.locator(`#${blockId}`);
  await block.locator('.opblock-summary-control').click();
  await block.locator('.try-out__btn').click();
  await block.locator('.execute').click();
  const status = block.locator('.live-responses-table .response .response-col_status').first();
  await status.waitFor({ timeout: 15_000 });
  return (await status.innerText()).trim();
}

export async function checkDocs(
  baseUrl: string,
  opts: { token?: string; screenshot?: string; log?: (msg: string) => void } = {},
): Promise<DocsCheckResult> {
  const log = opts.log ?? (() => {});
  const origin = new URL(baseUrl).origin;
  const screenshot = resolve(opts.screenshot ?? join(repoRoot, '.data', 'docs-screenshot.png'));
  mkdirSync(dirname(screenshot), { recursive: true });

  type Item = Record<string, { tags?: string[] }>;
  const doc = (await (await fetch(`${origin}/openapi.json`)).json()) as {
    paths: Record<string, Item>;
    webhooks?: Record<string, Item>;
  };
  // Swagger UI renders the `webhooks` section's entries as operations too.
  const ops = [...Object.values(doc.paths), ...Object.values(doc.webhooks ?? {})].flatMap((methods) =>
    Object.values(methods),
  );
  const expectedTags = [...new Set(ops.flatMap((o) => o.tags ?? []))].sort();

  const executablePath = ensureChromium(log);
  const profile = mkdtempSync(join(tmpdir(), 'check-docs-'));
  const consoleErrors: string[] = [];
  const cspViolations: string[] = [];
  const failedRequests: string[] = [];
  const externalRequests: string[] = [];
  // A fresh profile each run: no cached assets or stored state hides a problem.
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 900 },
  });
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    // Anything but this service is refused and recorded: the page must not need the internet.
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(`${origin}/`)) return route.continue();
      externalRequests.push(url);
      return route.abort();
    });
    page.on('console', (msg) => {
      if (msg.type() !== 'error') return;
      (/Content Security Policy/i.test(msg.text()) ? cspViolations : consoleErrors).push(msg.text());
    });
    page.on('pageerror', (err) => consoleErrors.push(`uncaught: ${err.message}`));
    page.on('requestfailed', (req) => failedRequests.push(`${req.method()} ${req.url()}: ${req.failure()?.errorText}`));
    page.on('response', (res) => {
      if (res.status() >= 400) failedRequests.push(`${res.request().method()} ${res.url()}: ${res.status()}`);
    });

    log(`loading ${origin}/docs`);
    await page.goto(`${origin}/docs`, { waitUntil: 'load' });
    // The first operation of the first tag (the document's `tags` order) shows the page has rendered.
    await page.locator('.opblock').first().waitFor({ timeout: 30_000 });
    // A loaded machine may scroll past a window before it renders: slower passes add what was missed.
    let rendered = await scrollThrough(page);
    for (const settleMs of [250, 800]) {
      if (rendered.operations.size >= ops.length) break;
      rendered = await scrollThrough(page, settleMs, rendered.operations, rendered.tags);
    }
    const renderedOperations = rendered.operations.size;
    const renderedTags = [...rendered.tags].sort();

    // The Authorize dialog lists the bearer scheme; with a token, authorize for the try-it-out below.
    await page.locator('.auth-wrapper .authorize').click();
    const dialog = page.locator('.modal-ux');
    await dialog.waitFor();
    const authSchemes = (await dialog.locator('.auth-container h4').allInnerTexts()).map((s) => s.trim());
    if (opts.token) {
      await dialog.locator('input[type=text], input[type=password]').first().fill(opts.token);
      await dialog.locator('button.authorize').click();
    }
    await dialog.locator('button.btn-done, .close-modal').first().click();

    await page.screenshot({ path: screenshot });
    const tryItOut: Record<string, string> = {
      'GET /healthz': await tryOperation(page, 'operations-system-getHealth'),
    };
    if (opts.token) tryItOut['GET /api/users/me'] = await tryOperation(page, 'operations-users-getMe');

    const problems = [
      ...(renderedOperations !== ops.length
        ? [`rendered ${renderedOperations} operations, the document has ${ops.length}`]
        : []),
      ...(renderedTags.join() !== expectedTags.join() ? [`tags ${renderedTags.join()} != ${expectedTags.join()}`] : []),
      ...(authSchemes.some((s) => /bearer/i.test(s)) ? [] : ['the Authorize dialog shows no bearer scheme']),
      ...Object.entries(tryItOut)
        .filter(([, status]) => status !== '200')
        .map(([op, status]) => `try-it-out ${op} answered ${status}`),
      ...consoleErrors.map((e) => `console: ${e}`),
      ...cspViolations.map((e) => `CSP: ${e}`),
      ...failedRequests.map((e) => `request: ${e}`),
      ...externalRequests.map((e) => `external request: ${e}`),
    ];
    return {
      expectedOperations: ops.length,
      renderedOperations,
      expectedTags,
      renderedTags,
      authSchemes,
      tryItOut,
      consoleErrors,
      cspViolations,
      failedRequests,
      externalRequests,
      screenshot,
      problems,
    };
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  const flag = (name: string) => {
    const i = args.indexOf(name);
    if (i < 0) return undefined;
    const value = args.splice(i, 2)[1];
    if (!value || value.startsWith('--')) throw new Error(`${name} needs a value`);
    return value;
  };
  const token = flag('--token');
  const screenshotPath = flag('--screenshot');
  const base = args[0] ?? `http://127.0.0.1:${process.env.PORT ?? 3000}`;
  const result = await checkDocs(base, {
    token,
    screenshot: screenshotPath,
    log: (m) => console.error(`[check:docs] ${m}`),
  });
  console.log(JSON.stringify(result, null, 2));
  console.error(
    result.problems.length
      ? `[check:docs] FAILED: ${result.problems.join('; ')}`
      : `[check:docs] ok: ${result.renderedOperations} operations, screenshot ${result.screenshot}`,
  );
  process.exit(result.problems.length ? 1 : 0);
}
