// The playground in a real browser (docs/getting-started.md "The playground"): Debian's chromium driven by playwright-core
// loads the example's page, generates an image (the <img> has loaded: naturalWidth > 0), edits an
// uploaded file, shows an error object's message, and follows a video task to `succeeded` until the
// <video> has data to play (readyState >= 2). Screenshots are kept in artifacts/ (gitignored).
// Waits are for states, never for durations. .ci/run installs chromium; elsewhere the suite is
// skipped with a note when /usr/bin/chromium is missing (never in CI).
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, type Page, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderPicture } from '../../examples/render-png.js';
import { createExampleApp, type ExampleApp } from '../../examples/server.js';
import { listen } from '../helpers/gateway-app.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const ARTIFACTS = path.join(ROOT, 'artifacts');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
if (!available && process.env.CI === 'true') throw new Error(`${CHROMIUM} is missing: .ci/run installs Debian's chromium`);
if (!available) console.warn(`playground-browser.spec.ts skipped: no ${CHROMIUM} (apt-get install -y chromium)`);

// generous: a busy 2-core machine, a browser start, a video task of a few seconds
const STATE_TIMEOUT = 45_000;

// the few page objects the predicates read (this file is compiled without the DOM library; the
// predicates run in the page, passed as functions because the page's CSP forbids evaluating strings)
interface ImageLike {
  complete: boolean;
  naturalWidth: number;
}
interface VideoLike {
  hidden: boolean;
  readyState: number;
  videoWidth: number;
  src: string;
}
declare const document: {
  querySelector(selector: string): unknown;
  querySelectorAll(selector: string): Iterable<unknown>;
};

describe.skipIf(!available)('the playground in Debian chromium', () => {
  let example: ExampleApp;
  let server: { url: string; close(): Promise<void> };
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];

  beforeAll(async () => {
    example = await createExampleApp({ env: { GATEWAY_DEMO_KEY: 'sk-demo-local-only' }, host: '127.0.0.1', arkTiming: { queuedMs: 2500, runningMs: 2500 }, provenance: true });
    server = await listen(example.app);
    await mkdir(ARTIFACTS, { recursive: true });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
    });
    page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    page.setDefaultTimeout(STATE_TIMEOUT);
    // a blocked inline script (CSP) or any script error would show here
    page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error' && !/status of 4\d\d/.test(message.text())) problems.push(`console: ${message.text()}`);
    });
    await page.goto(`${server.url}/`);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await example?.close();
  });

  it('loads with the demo key and fills each model picker with the models of its route from GET /v1/models', async () => {
    await expect.poll(() => page.textContent('#models-note'), { timeout: STATE_TIMEOUT }).toBe('15 models');
    expect(await page.inputValue('#key')).toBe('sk-demo-local-only');
    const optionsOf = (list: string) => page.$$eval(`#${list} option`, (nodes) => nodes.map((node) => (node as unknown as { value: string }).value));
    const images = await optionsOf('models-image');
    expect(images).toEqual(expect.arrayContaining(['x-image-2.0', 'x-gpt-image', 'x-gemini-image', 'x-flux', 'x-flux-schnell']));
    expect(images).not.toContain('x-video');
    expect(await optionsOf('models-edit')).toEqual(expect.arrayContaining(['x-image-edit', 'x-gpt-image', 'x-gemini-image']));
    expect(await optionsOf('models-edit')).not.toContain('x-flux');
    expect(await optionsOf('models-video')).toEqual(['x-video', 'x-veo', 'x-kling', 'x-kling-replicate']);
  });

  it("offers the video lengths the chosen model takes (Veo: 4, 6 or 8 s), and goes back to the default model's", async () => {
    const seconds = () => page.$$eval('#video-duration option', (nodes) => nodes.map((node) => Number((node as unknown as { textContent: string }).textContent)));
    await page.click('nav button[data-panel=panel-video]');
    await page.fill('#video-model', 'x-veo');
    await page.dispatchEvent('#video-model', 'change');
    expect(await seconds()).toEqual([4, 6, 8]);
    expect(await page.inputValue('#video-duration')).toBe('4');
    await page.fill('#video-model', 'x-video');
    await page.dispatchEvent('#video-model', 'change');
    expect(await seconds()).toContain(10);
    await page.click('nav button[data-panel=panel-generate]');
  });

  it('generates two images that load in the grid, with request id, latency and cost', async () => {
    await page.fill('#image-prompt', 'A lighthouse at dawn, watercolour');
    await page.selectOption('#image-n', '2');
    await page.click('#generate button[type=submit]');
    await page.waitForFunction(() => [...document.querySelectorAll('#image-results img')].filter((image) => (image as ImageLike).complete && (image as ImageLike).naturalWidth > 0).length === 2);
    const widths = await page.$$eval('#image-results img', (nodes) => nodes.map((node) => (node as unknown as ImageLike).naturalWidth));
    expect(widths.every((width) => width > 0)).toBe(true);
    const caption = await page.textContent('#image-results figcaption');
    expect(caption).toMatch(/Request id: [0-9a-f-]{36}/);
    expect(caption).toMatch(/Latency: \d+ ms/);
    // the example prices x-image-2.0 at 0.035 USD an image (examples/server.ts EXAMPLE_PRICING)
    expect(caption).toContain('Cost of this request: 0.07 USD');
    // each image's Content Credentials: signed by the example's own CA, its one trust anchor (docs/provenance.md)
    const credentials = await page.$$eval('#image-results figcaption .provenance', (nodes) => nodes.map((node) => node.textContent));
    expect(credentials).toEqual(['C2PA: valid · signer: Image gateway example · trusted', 'C2PA: valid · signer: Image gateway example · trusted']);
    await page.screenshot({ path: path.join(ARTIFACTS, 'playground-generate.png'), fullPage: true });
  });

  it('submits a task, shows its states and then its image', async () => {
    await page.selectOption('#image-n', '1');
    await page.selectOption('#image-mode', 'task');
    await page.click('#generate button[type=submit]');
    await page.waitForSelector('#image-states li[data-status=succeeded]');
    await page.waitForFunction(() => {
      const image = document.querySelector('#image-results img') as ImageLike | null;
      return image !== null && image.complete && image.naturalWidth > 0;
    });
    const states = await page.$$eval('#image-states li', (nodes) => nodes.map((node) => (node as unknown as { dataset: { status?: string } }).dataset.status));
    expect(states[0]).toBe('queued');
    expect(states.at(-1)).toBe('succeeded');
    expect(await page.textContent('#image-meta')).toMatch(/Task id: imgtask_/);
    expect(await page.textContent('#panel-generate .error')).toBe('');
  });

  it('streams an image and shows the completed one', async () => {
    await page.selectOption('#image-mode', 'stream');
    await page.click('#generate button[type=submit]');
    await page.waitForFunction(() => {
      const image = document.querySelector('#image-results img') as (ImageLike & { src: string }) | null;
      return image !== null && image.src.startsWith('data:image/') && image.complete && image.naturalWidth > 0;
    });
    // the completed event's report, at its top level
    expect(await page.textContent('#image-results figcaption .provenance')).toBe('C2PA: valid · signer: Image gateway example · trusted');
    expect(await page.textContent('#panel-generate .error')).toBe('');
    await page.selectOption('#image-mode', 'wait');
  });

  it("shows the error object's message when the gateway refuses", async () => {
    await page.fill('#image-model', 'x-no-such-model');
    await page.click('#generate button[type=submit]');
    await expect.poll(() => page.textContent('#panel-generate .error'), { timeout: STATE_TIMEOUT }).toContain("The model 'x-no-such-model' does not exist");
    expect(await page.textContent('#panel-generate .error')).toContain('[model_not_found]');
    await page.fill('#image-model', 'x-image-2.0');
  });

  it('shows a content policy refusal with its flagged categories', async () => {
    // the example's simulated moderation service flags "massacre" (docs/content-safety.md)
    const prompt = await page.inputValue('#image-prompt');
    await page.fill('#image-prompt', 'a massacre at the lighthouse');
    await page.click('#generate button[type=submit]');
    await expect.poll(() => page.textContent('#panel-generate .error'), { timeout: STATE_TIMEOUT }).toContain('[content_policy_violation]');
    expect(await page.textContent('#panel-generate .error')).toContain('Flagged categories: violence');
    await page.screenshot({ path: path.join(ARTIFACTS, 'playground-refusal.png'), fullPage: true });
    await page.fill('#image-prompt', prompt);
  });

  it('edits an uploaded image and shows the result', async () => {
    await page.click('nav button[data-panel=panel-edit]');
    const upload = renderPicture({ prompt: 'a house', images: [], index: 0, width: 96, height: 64 });
    await page.setInputFiles('#edit-files', [{ name: 'house.png', mimeType: 'image/png', buffer: upload }]);
    await expect.poll(() => page.textContent('#edit-count')).toBe('1 of 3 images');
    await page.click('#edit button[type=submit]');
    await page.waitForFunction(() => {
      const image = document.querySelector('#edit-results img') as ImageLike | null;
      return image !== null && image.complete && image.naturalWidth > 0;
    });
    expect(await page.textContent('#edit-results figcaption')).toMatch(/Request id: /);
    expect(await page.textContent('#panel-edit .error')).toBe('');
  });

  it('creates a video task, shows progress, follows it to succeeded and plays the video', async () => {
    await page.click('nav button[data-panel=panel-video]');
    await page.click('#video button[type=submit]');
    // progress is visible while the task is followed (the first query waits its poll interval)
    await page.waitForSelector('#panel-video.busy .progress', { state: 'visible' });
    await page.waitForSelector('#video-states li[data-status=succeeded]');
    const states = await page.$$eval('#video-states li', (nodes) => nodes.map((node) => (node as unknown as { dataset: { status?: string } }).dataset.status));
    expect(['queued', 'running', 'succeeded'].filter((status) => states.includes(status))).toEqual(states);
    await page.waitForFunction(() => {
      const video = document.querySelector('#video-player') as VideoLike | null;
      return video !== null && !video.hidden && video.readyState >= 2;
    });
    const video = await page.$eval('#video-player', (node) => {
      const element = node as unknown as VideoLike;
      return { readyState: element.readyState, width: element.videoWidth, src: element.src };
    });
    expect(video.readyState).toBeGreaterThanOrEqual(2);
    expect(video.width).toBe(256);
    // durable results (the example's embedded store): the router's own signed URL, not the upstream's one-download link
    expect(video.src).toMatch(/\/v1\/results\/[0-9a-f]{32}\/[A-Za-z0-9_-]{22}\.webm\?expires=\d+&signature=[A-Za-z0-9_-]+$/);
    expect(await page.textContent('#panel-video .error')).toBe('');
    await page.screenshot({ path: path.join(ARTIFACTS, 'playground-video.png'), fullPage: true });
    // no script error anywhere in the run: the Content-Security-Policy allowed the inline script
    expect(problems).toEqual([]);
  }, 90_000);
});
