// Every `curl` of README.md works as it stands against the example (issue 11, item 1): each ```sh
// block that calls curl runs in bash, unchanged except `localhost:3000` / `127.0.0.1:3000` pointing at
// this run's port. curl runs with --fail-with-body (a ~/.curlrc of its own), so any HTTP error fails
// the block; no vendor key is set, so nothing can leave the machine.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderPicture } from '../../examples/render-png.js';
import { createExampleApp, type ExampleApp } from '../../examples/server.js';
import { listen } from '../helpers/gateway-app.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The ```sh blocks of a Markdown text that call curl (also `x=$(curl …)`), in order. */
function curlBlocks(markdown: string): string[] {
  const blocks = [...markdown.matchAll(/^```sh\n([\s\S]*?)^```/gm)].map((match) => match[1]!);
  return blocks.filter((block) => /^\s*(?:\w+=\$\()?curl /m.test(block));
}

function runBash(script: string, cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-eo', 'pipefail', '-c', script], { cwd, env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('README.md curl commands against the example', () => {
  let example: ExampleApp;
  let server: { url: string; close(): Promise<void> };
  let work: string;
  let blocks: string[];

  beforeAll(async () => {
    example = await createExampleApp({ env: { GATEWAY_DEMO_KEY: 'sk-demo-local-only' }, host: '127.0.0.1' });
    server = await listen(example.app);
    work = await mkdtemp(path.join(tmpdir(), 'readme-curls-'));
    // the README's multipart example uploads in.png and style.png "of yours"
    await writeFile(path.join(work, 'in.png'), renderPicture({ prompt: 'in', images: [], index: 0, width: 64, height: 48 }));
    await writeFile(path.join(work, 'style.png'), renderPicture({ prompt: 'style', images: [], index: 0, width: 48, height: 64 }));
    await writeFile(path.join(work, '.curlrc'), 'fail-with-body\nmax-time = 60\nsilent\nshow-error\n');
    blocks = curlBlocks(await readFile(path.join(ROOT, 'README.md'), 'utf8'));
  });

  afterAll(async () => {
    await server?.close();
    await example?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('finds the curl blocks of every section that shows one', () => {
    // text-to-image, variants, every route, the video flow, the video section
    expect(blocks.length).toBeGreaterThanOrEqual(5);
    const all = blocks.join('\n');
    for (const route of [
      '/v1/images/generations',
      '/v1/images/edits',
      '/v1/chat/completions',
      '/v1/responses',
      '/v1/models',
      '/api/v3/images/generations',
      '/api/v3/open/CreateAsset',
      '/api/v3/contents/generations/tasks',
    ]) {
      expect(all).toContain(route);
    }
  });

  it('runs each block verbatim (port aside) with no HTTP error and no error object', async () => {
    const port = new URL(server.url).port;
    const env = { PATH: process.env.PATH, HOME: work, CURL_HOME: work, LANG: 'C.UTF-8' };
    const outputs: string[] = [];
    for (const block of blocks) {
      const script = block.replace(/\b(?:localhost|127\.0\.0\.1):3000\b/g, `127.0.0.1:${port}`);
      const result = await runBash(script, work, env);
      expect({ block: block.slice(0, 160), code: result.code, stderr: result.stderr }).toEqual({ block: block.slice(0, 160), code: 0, stderr: '' });
      expect(result.stdout).not.toContain('"error":{');
      outputs.push(result.stdout);
    }
    const all = outputs.join('\n');
    // pictures came back, the stream ended as OpenAI's does, and the video task ended
    // durable results: URLs of the example's own signed result route, not the simulation's dying links
    expect(all).toMatch(/"url":"http:\/\/127\.0\.0\.1:\d+\/v1\/results\/[a-f0-9]{32}\/[A-Za-z0-9_-]{22}\.png\?expires=\d+&signature=[A-Za-z0-9_-]{43}"/);
    expect(all).toContain('data: [DONE]');
    expect(all).toContain('event: response.completed');
    expect(all).toMatch(/"status":"succeeded".*"video_url":"http:\/\/127\.0\.0\.1:\d+\/v1\/results\/[^"]+\.webm\?[^"]+"/);
  });

  it("delivered the README video task's states to the example's own receiver, signed", async () => {
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline && !example.callbacks.deliveries.some((delivery) => delivery.status === 'succeeded')) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(example.callbacks.deliveries.map((delivery) => delivery.status)).toContain('succeeded');
  });
});
