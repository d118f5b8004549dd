// The published declarations stand alone: one rolled-up file per entry and module format, importing
// only express and node. ioredis, bullmq, @aws-sdk/* and @opentelemetry/api are optional peers, so a
// TypeScript host that installs none of them and type-checks its libraries (`skipLibCheck: false`)
// must still compile against every entry, from an ES module (.mts: the `import` condition, .d.ts) and
// from a CommonJS one (.cts: the `require` condition, .d.cts), on `moduleResolution: node16`, under
// `strict` with `exactOptionalPropertyTypes`, as strict hosts compile (keys read from the environment
// go into an Upstream and the callbacks as they are).
// The declarations are rolled up exactly as scripts/build.ts rolls them (scripts/package-entries.ts),
// but into a temporary package, so this spec never races package-build.spec.ts over dist/.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENTRIES, type EntryName, rollUpDeclarations } from '../../scripts/package-entries.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const tsc = path.join(root, 'node_modules/.bin/tsc');
const OPTIONAL_PEERS = ['ioredis', 'bullmq', '@aws-sdk/client-s3', '@aws-sdk/lib-storage', '@aws-sdk/s3-request-presigner', '@opentelemetry/api'];

// a host that uses every entry in its own types: the places that once imported the optional peers,
// express's Request and Response where the gateway hands them over, and each subpath's pieces going
// into the root's options
const consumer = `
import express from 'express';
import { GatewayError, createGatewayRouter, gatewayCaller, memoryTaskStore, staticKeys,
  type GatewayOptions, type ResultStorage, type SharedRedisClient, type TaskStore, type VerifyKey } from 'express-image-gateway';
import { bullmqScheduler, redisIdempotencyStore, redisTaskStore,
  type BullmqSchedulerOptions, type QuotaRedisClient, type RedisIdempotencyStoreOptions, type RedisTaskStoreOptions } from 'express-image-gateway/redis';
import { localResultStorage, s3ResultStorage, type PutInfo, type ReadOutcome } from 'express-image-gateway/storage';
import { createPlayground, type PlaygroundOptions } from 'express-image-gateway/playground';
import { describeTaskStoreContract } from 'express-image-gateway/testing';

declare const client: RedisTaskStoreOptions['client'];
declare const connection: BullmqSchedulerOptions['connection'];
declare const idempotencyClient: RedisIdempotencyStoreOptions['client'];
declare const quotaRedis: QuotaRedisClient;
declare const sharedRedis: SharedRedisClient;
const store: TaskStore = process.env.REDIS_URL ? redisTaskStore({ client, prefix: 'host:' }) : memoryTaskStore({ maxTasks: 10 });
const storage: ResultStorage = process.env.S3_BUCKET
  ? s3ResultStorage({ bucket: process.env.S3_BUCKET })
  : localResultStorage({ directory: './results', secret: 'a-long-enough-secret-for-signing-urls' });
// express's Request, not the global fetch one: it has get()
const verifyKey: VerifyKey = (key, req) => (req.get('x-tenant') ? { id: req.get('x-tenant')! } : staticKeys({ 'sk-a': 'tenant-a' })(key, req));
const options: GatewayOptions = {
  verifyKey,
  resolveUpstream: ({ model, route }) => {
    if (model === 'forbidden') throw GatewayError.permissionDenied('not on your plan');
    // keys from the environment, string | undefined, as the README's resolver gives them
    if (route === 'assets') return { provider: 'ark', baseURL: 'https://open.volcengineapi.com', accessKeyId: process.env.VOLC_AK, secretAccessKey: process.env.VOLC_SK, region: process.env.VOLC_REGION };
    if (model === 'ds-plus') return { provider: 'dashscope', baseURL: 'https://dashscope-intl.aliyuncs.com/api/v1', apiKey: process.env.DASHSCOPE_API_KEY, model: 'qwen-image-plus' };
    return null;
  },
  store,
  storage,
  callbacks: { scheduler: bullmqScheduler({ connection, queueName: 'host' }), signingSecret: process.env.WEBHOOK_SECRET },
  idempotency: { store: redisIdempotencyStore({ client: idempotencyClient }) },
  tenancy: { quotas: { limits: { requestsPerMinute: 60 }, redis: quotaRedis } },
};
export const router = createGatewayRouter(options);
// Redis given once, the host's middleware with the tenant known
export const shared = createGatewayRouter({
  verifyKey,
  resolveUpstream: () => null,
  redis: { client: sharedRedis, prefix: 'host:' },
  tenancy: { afterAuthentication: (_req, res, next) => (gatewayCaller(res) ? next() : next(GatewayError.authentication('who?'))) },
});
const playground: PlaygroundOptions = { apiBase: '/ai' };
const app = express();
app.use('/ai', router);
app.use('/playground', createPlayground(playground));
// express's Response: gatewayCaller reads the caller the gateway kept for it
app.use((_req: express.Request, res: express.Response, next: express.NextFunction) => {
  res.on('finish', () => console.log(gatewayCaller(res)?.id));
  next();
});
export const isGatewayError = (error: unknown): string | undefined => (GatewayError.is(error) ? error.code : undefined);
export type StorageTypes = [PutInfo, ReadOutcome];
export const contract: typeof describeTaskStoreContract = describeTaskStoreContract;
`;

const tsconfig = {
  compilerOptions: {
    target: 'ES2022',
    module: 'Node16',
    moduleResolution: 'Node16',
    lib: ['ES2023'],
    types: ['node'],
    strict: true,
    exactOptionalPropertyTypes: true,
    skipLibCheck: false,
    noEmit: true,
  },
  files: ['consumer.mts', 'consumer.cts'],
};

let dir: string;
let declarations: Record<EntryName, string>;

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'gateway-published-types-'));
  declarations = rollUpDeclarations();
  // the package as installed: its package.json (name, type, exports) and the declarations its exports name
  const installed = path.join(dir, 'node_modules/express-image-gateway');
  mkdirSync(path.join(installed, 'dist'), { recursive: true });
  const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as Record<string, unknown>;
  writeFileSync(path.join(installed, 'package.json'), JSON.stringify({ name: manifest.name, version: manifest.version, type: manifest.type, exports: manifest.exports }));
  for (const [name, text] of Object.entries(declarations)) {
    writeFileSync(path.join(installed, 'dist', `${name}.d.ts`), text);
    writeFileSync(path.join(installed, 'dist', `${name}.d.cts`), text);
  }
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'host', private: true }));
  writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify(tsconfig));
  writeFileSync(path.join(dir, 'consumer.mts'), consumer);
  writeFileSync(path.join(dir, 'consumer.cts'), consumer);
  // the host has express, @types/express and @types/node (the declarations need them) and nothing else
  symlinkSync(path.join(root, 'node_modules/@types'), path.join(dir, 'node_modules/@types'), 'dir');
  symlinkSync(path.join(root, process.env.GATEWAY_EXPRESS === '4' ? 'node_modules/express4' : 'node_modules/express'), path.join(dir, 'node_modules/express'), 'dir');
}, 120_000);
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('published declarations', () => {
  it('the temporary host really cannot resolve the optional peers', () => {
    const requireFromHost = createRequire(path.join(dir, 'consumer.cts'));
    for (const peer of OPTIONAL_PEERS) expect(() => requireFromHost.resolve(peer), peer).toThrow(/Cannot find module/);
  });

  it('one file per entry that imports only express and node: no internal module ships', () => {
    expect(Object.keys(declarations).sort()).toEqual(Object.keys(ENTRIES).sort());
    for (const [name, text] of Object.entries(declarations)) {
      const imported = [...text.matchAll(/^import .* from '([^']+)';$/gm)].map((match) => match[1]);
      expect(
        imported.filter((specifier) => specifier !== 'express' && !specifier!.startsWith('node:')),
        name,
      ).toEqual([]);
      // outside comments (a JSDoc @example may show an import())
      const code = text.split('\n').filter((line) => !/^\s*(\*|\/\*|\/\/(?!\/))/.test(line));
      expect(
        code.filter((line) => /import\(|require\(|\/\/\/ <reference/.test(line)),
        name,
      ).toEqual([]);
    }
  });

  it('type-check with skipLibCheck: false and exactOptionalPropertyTypes, as ESM and as CommonJS, in a host without the optional peers', () => {
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

  it('the CommonJS host reads the .d.cts declarations and the ESM host the .d.ts ones', () => {
    const traced = execFileSync(tsc, ['-p', path.join(dir, 'tsconfig.json'), '--traceResolution'], { cwd: dir, encoding: 'utf8', stdio: 'pipe' });
    const resolved = [...traced.matchAll(/======== Module name '(express-image-gateway[^']*)' was successfully resolved to '([^']+)'/g)].map(
      (match) => `${match[1]} -> ${path.relative(path.join(dir, 'node_modules/express-image-gateway'), match[2]!)}`,
    );
    const expected = ['', '/redis', '/storage', '/playground', '/testing'].flatMap((subpath) => {
      const name = subpath === '' ? 'index' : subpath.slice(1);
      return [`express-image-gateway${subpath} -> dist/${name}.d.ts`, `express-image-gateway${subpath} -> dist/${name}.d.cts`];
    });
    expect([...new Set(resolved)].sort()).toEqual(expected.sort());
  }, 120_000);
});
