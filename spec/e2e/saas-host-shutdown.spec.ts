// The SaaS host example's graceful shutdown as a process (docs/deployment.md "Graceful shutdown"): with
// its own Redis client in use by the gateway (tasks, BullMQ scheduler, Idempotency-Key records), a
// SIGTERM closes the server, the gateway and then the host's own client, and the process exits by
// itself with code 0: nothing the gateway opened, or left to the host, keeps it running.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';

const REDIS_URL = process.env.REDIS_URL;
const here = path.dirname(fileURLToPath(import.meta.url));

describe.runIf(Boolean(REDIS_URL))('saas-host: SIGTERM with the host Redis client', () => {
  it('answers, then exits by itself with code 0 after closing the gateway and its Redis client', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--import', path.join(here, '../helpers/express-major.ts'), path.join(here, '../../examples/saas-host/server.ts')], {
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1', REDIS_URL, REDIS_PREFIX: `saas-shutdown-${randomBytes(4).toString('hex')}`, LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      // a process that does not exit has leaked something: stop it (only this one) and fail
      const guard = setTimeout(() => child.kill('SIGKILL'), 45_000);
      child.once('exit', (code, signal) => {
        clearTimeout(guard);
        resolve({ code, signal });
      });
    });
    const baseURL = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString('utf8');
        const match = /"openaiBaseURL":"([^"]+)"/.exec(stdout);
        if (match) resolve(match[1]!);
      });
      child.once('exit', () => reject(new Error(`the example exited before listening:\n${stdout}\n${stderr}`)));
    });
    const client = new OpenAI({ baseURL, apiKey: 'sk-globex-live-1', maxRetries: 0 });
    const image = await client.images.generate({ model: 'x-image-2.0', prompt: 'A lighthouse' }, { headers: { 'Idempotency-Key': 'shutdown-1' } });
    expect(image.data).toHaveLength(1);
    // a video task on the task-style route (no OpenAI SDK method): its record and its first poll (a
    // delayed BullMQ job, a minute away) are in Redis when the process is told to stop
    const created = await fetch(baseURL.replace(/\/v1$/, '/api/v3/contents/generations/tasks'), {
      method: 'POST',
      headers: { authorization: 'Bearer sk-globex-live-1', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'x-video', content: [{ type: 'text', text: 'a cat' }], callback_url: 'https://93.184.216.34/hooks/video' }),
    });
    expect(created.status).toBe(200);
    expect(((await created.json()) as { id: string }).id).toMatch(/^task_/);

    child.kill('SIGTERM');
    const exit = await exited;
    expect(exit).toEqual({ code: 0, signal: null });
    const messages = stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => (JSON.parse(line) as { msg?: string }).msg);
    expect(messages).toEqual(expect.arrayContaining(['shutting down', 'gateway closed: task scheduler stopped, upstream sockets freed', 'closed']));
  }, 60_000);
});
