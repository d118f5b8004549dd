// The published declarations stand alone: ioredis and bullmq are optional peers, so a TypeScript host
// that installs neither and type-checks its libraries (`skipLibCheck: false`) must still compile
// against them. The declarations are emitted exactly as scripts/build.ts emits them (tsconfig.build.json),
// but into a temporary directory, so this spec never races package-build.spec.ts over dist/.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const tsc = path.join(root, 'node_modules/.bin/tsc');

// a host that names the Redis-backed pieces in its own types: the places that used to import ioredis
const consumer = `
import { bullmqScheduler, createGatewayRouter, memoryTaskStore, redisTaskStore, staticKeys,
  type BullmqSchedulerOptions, type GatewayOptions, type RedisTaskStoreOptions, type TaskStore } from './index.js';

declare const client: RedisTaskStoreOptions['client'];
declare const connection: BullmqSchedulerOptions['connection'];
const store: TaskStore = process.env.REDIS_URL ? redisTaskStore({ client, prefix: 'host:' }) : memoryTaskStore({ maxTasks: 10 });
const options: GatewayOptions = {
  verifyKey: staticKeys({ 'sk-a': { id: 'tenant-a' } }),
  resolveUpstream: () => null,
  store,
  scheduler: bullmqScheduler({ connection, queueName: 'host' }),
};
export const router = createGatewayRouter(options);
`;

const tsconfig = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    lib: ['ES2023'],
    types: ['node'],
    strict: true,
    skipLibCheck: false,
    noEmit: true,
  },
  files: ['consumer.ts'],
};

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'gateway-published-types-'));
  execFileSync(tsc, ['-p', path.join(root, 'tsconfig.build.json'), '--outDir', path.join(dir, 'types')], { cwd: root, stdio: 'pipe' });
  writeFileSync(path.join(dir, 'index.d.ts'), "export * from './types/index.js';\n");
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify(tsconfig));
  writeFileSync(path.join(dir, 'consumer.ts'), consumer);
  // the host has @types/express and @types/node (the declarations need them) and nothing else
  mkdirSync(path.join(dir, 'node_modules'));
  symlinkSync(path.join(root, 'node_modules/@types'), path.join(dir, 'node_modules/@types'), 'dir');
}, 120_000);
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('published declarations', () => {
  it('the temporary host really cannot resolve ioredis or bullmq', () => {
    const requireFromHost = createRequire(path.join(dir, 'consumer.ts'));
    expect(() => requireFromHost.resolve('ioredis')).toThrow(/Cannot find module/);
    expect(() => requireFromHost.resolve('bullmq')).toThrow(/Cannot find module/);
  });

  it('type-check with skipLibCheck: false in a host without ioredis or bullmq', () => {
    let output = '';
    try {
      execFileSync(tsc, ['-p', path.join(dir, 'tsconfig.json')], { cwd: dir, encoding: 'utf8', stdio: 'pipe' });
    } catch (error) {
      const failed = error as { stdout?: string; stderr?: string };
      output = `${failed.stdout ?? ''}${failed.stderr ?? ''}`;
    }
    // the whole compiler output: empty means tsc passed
    expect(output).toBe('');
  }, 120_000);
});
