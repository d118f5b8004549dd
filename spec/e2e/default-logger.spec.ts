// With no `logger` option the gateway's server-side failures still reach the operator: one JSON line
// each on stderr, with the request id its answer carries (docs/observability.md "Logs"); `logger:
// false` writes nothing. Run in a child process, whose stderr is the only place the default writes.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const here = path.dirname(fileURLToPath(import.meta.url));

async function run(mode: 'default' | 'silent'): Promise<{ stderrLines: Array<Record<string, unknown>>; answer: { status: number; requestId: string } }> {
  const child = spawn(process.execPath, ['--import', 'tsx', '--import', path.join(here, '../helpers/express-major.ts'), path.join(here, '../helpers/default-logger-main.ts'), mode], {
    env: process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => {
    const guard = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.once('exit', (exitCode) => {
      clearTimeout(guard);
      resolve(exitCode);
    });
  });
  expect(code).toBe(0);
  // some Node versions print a notice that module.register is experimental
  const lines = stderr.split('\n').filter((line) => line.startsWith('{'));
  return { stderrLines: lines.map((line) => JSON.parse(line) as Record<string, unknown>), answer: JSON.parse(stdout.trim()) as { status: number; requestId: string } };
}

describe('the default logger', () => {
  it('writes the thrown resolver and the 500 as one JSON line each on stderr, with the request id', async () => {
    const { stderrLines, answer } = await run('default');
    expect(answer.status).toBe(500);
    expect(stderrLines).toEqual([
      {
        level: 'error',
        time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        name: 'express-image-gateway',
        msg: 'resolveUpstream threw; answering 500',
        requestId: answer.requestId,
        route: 'images.generations',
        error: 'the plans table is unreachable',
      },
      expect.objectContaining({ level: 'error', msg: 'request answered 500', requestId: answer.requestId, route: 'images.generations', status: 500, code: 'internal_error', caller: 'tenant-a' }),
    ]);
  }, 30_000);

  it('logger: false writes nothing', async () => {
    const { stderrLines, answer } = await run('silent');
    expect(answer.status).toBe(500);
    expect(stderrLines).toEqual([]);
  }, 30_000);
});
