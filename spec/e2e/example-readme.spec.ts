// Every command the docs show works as written (docs/contributing.md "Documentation"): each ```sh
// block of README.md and of the pages of docs/ that calls curl runs in bash against the example,
// unchanged except `localhost:3000` / `127.0.0.1:3000` pointing at this run's port. curl runs with
// --fail-with-body (a ~/.curlrc of its own), so any HTTP error fails the block; no vendor key is set,
// so nothing can leave the machine.
import { spawn } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderPicture } from '../../examples/render-png.js';
import { createExampleApp, type ExampleApp } from '../../examples/server.js';
import { listen } from '../helpers/gateway-app.js';
import { documentationFiles } from '../helpers/markdown-docs.js';

interface CurlBlock {
  /** `README.md`, `docs/routes.md` */
  file: string;
  code: string;
}

/** The ```sh blocks of a Markdown text that call curl (also `x=$(curl …)`), in order. */
function curlBlocks(file: string, markdown: string): CurlBlock[] {
  const blocks = [...markdown.matchAll(/^```sh\n([\s\S]*?)^```/gm)].map((match) => match[1]!);
  return blocks.filter((block) => /^\s*(?:\w+=\$\()?curl /m.test(block)).map((code) => ({ file, code }));
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

describe('the curl commands of README.md and docs/ against the example', () => {
  let example: ExampleApp;
  let server: { url: string; close(): Promise<void> };
  let work: string;
  let blocks: CurlBlock[];

  beforeAll(async () => {
    example = await createExampleApp({ env: { GATEWAY_DEMO_KEY: 'sk-demo-local-only' }, host: '127.0.0.1' });
    server = await listen(example.app);
    work = await mkdtemp(path.join(tmpdir(), 'readme-curls-'));
    // the multipart example uploads in.png and style.png "of yours"
    await writeFile(path.join(work, 'in.png'), renderPicture({ prompt: 'in', images: [], index: 0, width: 64, height: 48 }));
    await writeFile(path.join(work, 'style.png'), renderPicture({ prompt: 'style', images: [], index: 0, width: 48, height: 64 }));
    await writeFile(path.join(work, '.curlrc'), 'fail-with-body\nmax-time = 60\nsilent\nshow-error\n');
    blocks = documentationFiles().flatMap((file) => curlBlocks(file.name, file.text));
  });

  afterAll(async () => {
    await server?.close();
    await example?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('finds the curl blocks of every page that shows one', () => {
    // the README's first image, the routes, the video flow, durable results, idempotency
    expect(blocks.length).toBeGreaterThanOrEqual(5);
    expect(blocks.map((block) => block.file)).toContain('README.md');
    const all = blocks.map((block) => block.code).join('\n');
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

  // the blocks wait as a reader would (sleep) for the simulated video tasks, so this takes more than the
  // default timeout. Each block is a reader's session of its own (its own shell, its own folder with the
  // two pictures, its own tasks), so they run side by side: the sleeps overlap instead of adding up
  it('runs each block verbatim (port aside) with no HTTP error and no error object', async () => {
    const port = new URL(server.url).port;
    const env = { PATH: process.env.PATH, HOME: work, CURL_HOME: work, LANG: 'C.UTF-8' };
    const session = async (block: string, index: number): Promise<Awaited<ReturnType<typeof runBash>>> => {
      const folder = path.join(work, `block-${index}`);
      await mkdir(folder);
      for (const picture of ['in.png', 'style.png']) await copyFile(path.join(work, picture), path.join(folder, picture));
      return runBash(block.replace(/\b(?:localhost|127\.0\.0\.1):3000\b/g, `127.0.0.1:${port}`), folder, env);
    };
    const results = await Promise.all(blocks.map(({ code: block }, index) => session(block, index)));
    const outputs: string[] = [];
    for (const [index, { file, code: block }] of blocks.entries()) {
      const result = results[index]!;
      expect({ file, block: block.slice(0, 160), code: result.code, stderr: result.stderr }).toEqual({ file, block: block.slice(0, 160), code: 0, stderr: '' });
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
  }, 180_000);

  it("delivered the video task's states to the example's own receiver, signed", async () => {
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline && !example.callbacks.deliveries.some((delivery) => delivery.status === 'succeeded')) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(example.callbacks.deliveries.map((delivery) => delivery.status)).toContain('succeeded');
  });
});
