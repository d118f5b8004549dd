// The playground mounted in a host app under a prefix, with default options (docs/getting-started.md
// "The playground"): the SaaS host example serves it at /playground, the gateway at /ai, in front of
// the simulated DashScope and Ark. Debian's chromium driven by playwright-core checks what a person
// sees: no request and no console error before a key is given (no 401, no favicon 404), one size
// format in both forms, no empty video player before a video exists, no previous images under a new
// error, and a video task that plays once it ends, with the default query schedule and the gateway's
// default callback schedule. Waits are for states, never for durations.
import { existsSync } from 'node:fs';
import { type Browser, type Page, chromium } from 'playwright-core';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSaasHost, type SaasHost } from '../../examples/saas-host/app.js';
import { startSimulatedArk } from '../../examples/simulated-ark.js';
import { startSimulatedDashscope } from '../../examples/simulated-dashscope.js';
import { listen } from '../helpers/gateway-app.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
if (!available && process.env.CI === 'true') throw new Error(`${CHROMIUM} is missing: .ci/run installs Debian's chromium`);
// generous: a busy 2-core machine and a simulated task of about 4 s; far below the 60 s of the old schedule
const STATE_TIMEOUT = 30_000;

interface ImageLike {
  complete: boolean;
  naturalWidth: number;
}
interface VideoLike {
  readyState: number;
}
declare const document: { querySelector(selector: string): unknown; querySelectorAll(selector: string): Iterable<unknown> };
declare const getComputedStyle: (element: unknown) => { display: string };

describe.skipIf(!available)('the playground in a host app under a prefix, default options', () => {
  let host: SaasHost;
  let server: { url: string; close(): Promise<void> };
  let closers: Array<() => Promise<void>>;
  let browser: Browser;
  let page: Page;
  const consoleErrors: string[] = [];
  const failedResponses: string[] = [];

  beforeAll(async () => {
    const dashscope = await startSimulatedDashscope();
    const ark = await startSimulatedArk();
    host = createSaasHost({ logger: pino({ level: 'silent' }), dashscopeBaseURL: dashscope.baseURL, arkBaseURL: ark.baseURL });
    server = await listen(host.app);
    closers = [() => server.close(), () => host.gateway.close(), () => dashscope.close(), () => ark.close()];
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
    });
    page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    page.setDefaultTimeout(STATE_TIMEOUT);
    page.on('pageerror', (error) => consoleErrors.push(`pageerror: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
    page.on('response', (response) => {
      if (response.status() >= 400) failedResponses.push(`${response.status()} ${response.url()}`);
    });
    await page.goto(`${server.url}/playground`);
    await page.waitForLoadState('networkidle');
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    for (const close of closers ?? []) await close();
  });

  it('loads without a key: no request refused, no console error, a hint instead of a 401', async () => {
    expect(await page.inputValue('#key')).toBe('');
    expect(await page.textContent('#models-note')).toBe('Paste an API key to list the models');
    expect(failedResponses).toEqual([]);
    expect(consoleErrors).toEqual([]);
  });

  it('shows one size format in both forms', async () => {
    const labels = await page.$$eval('#image-size option, #edit-size option', (nodes) => nodes.map((node) => (node as unknown as { textContent: string }).textContent));
    const sizes = labels.filter((label) => /\d/.test(label));
    expect(sizes.length).toBeGreaterThan(5);
    expect(sizes.filter((label) => !/^\d+×\d+$/.test(label))).toEqual([]);
  });

  it('with a key: lists the models, generates, and a later error does not stand under the old images', async () => {
    await page.fill('#key', 'sk-globex-live-1');
    await page.dispatchEvent('#key', 'change');
    await expect.poll(() => page.textContent('#models-note'), { timeout: STATE_TIMEOUT }).toBe('2 models');
    await page.click('#generate button[type=submit]');
    await page.waitForFunction(() => [...document.querySelectorAll('#image-results img')].some((image) => (image as ImageLike).complete && (image as ImageLike).naturalWidth > 0));
    await page.fill('#image-model', 'x-no-such-model');
    await page.click('#generate button[type=submit]');
    await expect.poll(() => page.textContent('#panel-generate .error'), { timeout: STATE_TIMEOUT }).toContain("The model 'x-no-such-model' does not exist");
    expect(await page.$$('#image-results img')).toHaveLength(0);
    await page.fill('#image-model', 'x-image-2.0');
    // the refused request is the one console error so far (chromium reports every 4xx fetch)
    expect(consoleErrors).toEqual([expect.stringContaining('404')]);
    consoleErrors.length = 0;
  });

  it('shows no video player until a video exists, then plays the task as soon as it ended', async () => {
    await page.click('nav button[data-panel=panel-video]');
    const display = () => page.$eval('#video-player', (node) => getComputedStyle(node).display);
    expect(await display()).toBe('none');
    await page.click('#video button[type=submit]');
    await page.waitForSelector('#video-states li');
    expect(await display()).toBe('none');
    await page.waitForSelector('#video-states li[data-status=succeeded]', { timeout: STATE_TIMEOUT });
    await page.waitForFunction(() => ((document.querySelector('#video-player') as VideoLike | null)?.readyState ?? 0) >= 2, undefined, { timeout: STATE_TIMEOUT });
    expect(await display()).toBe('block');
    expect(await page.textContent('#panel-video .error')).toBe('');
    expect(consoleErrors).toEqual([]);
  }, 60_000);
});
