// `npm start` as a process (docs/getting-started.md "Try it with no account"): it listens on 127.0.0.1 unless HOST says otherwise,
// says at startup which vendors are simulated and warns for each unset key, prints one clear line (no
// stack) for a busy port, and closes gracefully on SIGTERM. The process runs with no vendor key.
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const VENDOR_KEYS = ['DASHSCOPE_API_KEY', 'ARK_API_KEY', 'VOLCENGINE_ACCESS_KEY_ID', 'VOLCENGINE_SECRET_ACCESS_KEY', 'OPENAI_API_KEY', 'HOST', 'PORT'];

interface Started {
  child: ChildProcess;
  output: () => { stdout: string; stderr: string };
  exited: Promise<number | null>;
}

function start(env: Record<string, string>): Started {
  const base = { ...process.env };
  for (const name of VENDOR_KEYS) delete base[name];
  // node itself with tsx's loader, not tsx's CLI: the CLI runs the server as a grandchild, which a
  // SIGKILL of the CLI would leave running after the suite
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/server.ts'], { cwd: ROOT, env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => ({ stdout, stderr }), exited };
}

async function waitFor(started: Started, pattern: RegExp, timeoutMs = 60_000): Promise<RegExpMatchArray> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const match = pattern.exec(started.output().stdout);
    if (match) return match;
    if (started.child.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no ${pattern} in the output:\n${started.output().stdout}\n${started.output().stderr}`);
}

const children: Started[] = [];
const servers: Server[] = [];
afterEach(async () => {
  for (const started of children.splice(0)) {
    if (started.child.exitCode === null) {
      started.child.kill('SIGKILL');
      await started.exited;
    }
  }
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

// starting tsx on a busy machine can take most of a minute: the bounds only stop a hung child
vi.setConfig({ testTimeout: 90_000 });

describe('npm start (examples/server.ts run directly)', () => {
  it('listens on 127.0.0.1 by default and says which upstreams are simulated', async () => {
    const started = start({ PORT: '0' });
    children.push(started);
    const [, port] = await waitFor(started, /^Image gateway example on http:\/\/127\.0\.0\.1:(\d+) /m);
    await waitFor(started, /^Callback receiver: /m);
    const { stdout } = started.output();
    expect(stdout).toContain('Simulated upstreams: DashScope (x-image-*), Ark (x-video, x-seedream), Volcengine assets (CreateAsset), OpenAI-compatible (x-chat)');
    for (const variable of ['DASHSCOPE_API_KEY', 'ARK_API_KEY', 'VOLCENGINE_ACCESS_KEY_ID and VOLCENGINE_SECRET_ACCESS_KEY', 'OPENAI_API_KEY']) {
      expect(stdout).toContain(`warning: ${variable} unset`);
    }
    const models = await fetch(`http://127.0.0.1:${port}/v1/models`, { headers: { authorization: 'Bearer sk-demo-local-only' } });
    expect(models.status).toBe(200);
    // the example prices its models: the printed usage shows what a request cost
    const image = await fetch(`http://127.0.0.1:${port}/v1/images/generations`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-demo-local-only', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'x-image-2.0', prompt: 'a lighthouse', n: 2 }),
    });
    expect(image.status).toBe(200);
    expect(image.headers.get('x-request-cost')).toBe('0.07 USD');
    await waitFor(started, /^\[usage\] caller="demo-tenant" route=images\.generations model="x-image-2\.0" status=200 .* cost=0\.07 USD$/m);
  });

  it('a busy port prints one clear line, no stack, and exits 1', async () => {
    const blocker = createServer();
    servers.push(blocker);
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    const started = start({ PORT: String(port) });
    children.push(started);
    expect(await started.exited).toBe(1);
    const lines = started
      .output()
      .stderr.split('\n')
      .filter((line) => line.trim() !== '' && !line.startsWith('DEPRECATED'));
    expect(lines).toEqual([`Port ${port} on 127.0.0.1 is already in use. Stop the other server, or pick another port: PORT=${port + 1} npm start`]);
  });

  it('SIGTERM closes it gracefully: a request in flight is answered, then the process exits 0', async () => {
    const started = start({ PORT: '0' });
    children.push(started);
    const [, port] = await waitFor(started, /^Image gateway example on http:\/\/127\.0\.0\.1:(\d+) /m);
    // a streamed chat answer takes about a second: SIGTERM arrives once its headers are here
    const response = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-demo-local-only', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'x-chat', stream: true, messages: [{ role: 'user', content: 'finish me' }] }),
    });
    expect(response.status).toBe(200);
    started.child.kill('SIGTERM');
    const body = await response.text();
    expect(body).toContain('data: [DONE]');
    expect(await started.exited).toBe(0);
    expect(started.output().stdout).toMatch(/SIGTERM: closing\n[\s\S]*closed\n/);
  });
});
