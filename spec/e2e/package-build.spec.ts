// The published shape: scripts/build.ts builds, for every entry of package.json "exports", an ESM and a
// CommonJS bundle and their rolled-up declarations, and a plain Node process can require() and import
// each entry by its name and mount the router in a host app.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp-dir.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const node = (args: string[]): string => execFileSync(process.execPath, args, { cwd: root, encoding: 'utf8' }).trim();

const mountAndCall = `
  const router = g.createGatewayRouter({ verifyKey: g.staticKeys({ k: 't' }), resolveUpstream: () => null });
  const app = express(); app.use(router);
  const server = app.listen(0, async () => {
    const res = await fetch('http://127.0.0.1:' + server.address().port + '/v1/images/generations', { method: 'POST', headers: { authorization: 'Bearer k', 'content-type': 'application/json' }, body: '{}' });
    console.log(res.status, JSON.stringify(await res.json()));
    server.close(); await router.close();
  });`;

// the host registers the real SDK before mounting; the gateway's bundle finds @opentelemetry/api itself
const traced = (load: (name: string) => string) => `
  const { trace } = ${load('@opentelemetry/api')};
  const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = ${load('@opentelemetry/sdk-trace-base')};
  const exporter = new InMemorySpanExporter();
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
  const router = g.createGatewayRouter({ verifyKey: g.staticKeys({ k: 't' }), resolveUpstream: () => null });
  const app = express(); app.use(router);
  const server = app.listen(0, async () => {
    await fetch('http://127.0.0.1:' + server.address().port + '/v1/images/generations', { method: 'POST', headers: { authorization: 'Bearer k', 'content-type': 'application/json' }, body: '{}' });
    await new Promise((resolve) => setTimeout(resolve, 50));
    console.log(exporter.getFinishedSpans().map((span) => span.name + ' ' + span.attributes['error.type']).join());
    server.close(); await router.close();
  });`;

beforeAll(() => {
  execFileSync(path.join(root, 'node_modules/.bin/tsx'), ['scripts/build.ts'], { cwd: root, stdio: 'pipe' });
}, 240_000);

// what each entry exports at run time (types aside): the same from require() and import
const ENTRY_VALUES: Record<string, string> = {
  'express-image-gateway':
    'AssetCapacityError,ContentPolicyError,DEFAULT_IMAGE_MODELS,DEFAULT_LIMITS,DEFAULT_MODEL_CATALOGUE,DeliveryPostponed,ERROR_CODES,GatewayConfigError,GatewayError,TEMPORARY_PROXY_HOSTS,createGatewayRouter,gatewayCaller,isGatewayPath,memoryIdempotencyStore,memoryScheduler,memoryTaskStore,modelEntry,openAIModeration,safetyIdentifierOf,skipGatewayRoutes,staticKeys',
  'express-image-gateway/redis': 'bullmqScheduler,redisIdempotencyStore,redisTaskStore',
  'express-image-gateway/storage': 'localResultStorage,s3ResultStorage',
  'express-image-gateway/playground': 'createPlayground',
  'express-image-gateway/testing': 'describeTaskStoreContract,sampleResult,sampleTask,useSkippingClock',
};
const DIST_NAMES = ['index', 'redis', 'storage', 'playground', 'testing'];

describe('package build', () => {
  it('emits ESM, CommonJS and declarations for both', () => {
    for (const file of ['index.js', 'index.cjs', 'index.d.ts', 'index.d.cts']) expect(existsSync(path.join(root, 'dist', file))).toBe(true);
  });

  it('emits, for every entry, its two bundles (with source maps) and one declaration file per module format, and nothing else', () => {
    const expected = DIST_NAMES.flatMap((name) => [`${name}.js`, `${name}.js.map`, `${name}.cjs`, `${name}.cjs.map`, `${name}.d.ts`, `${name}.d.cts`]);
    expect(readdirSync(path.join(root, 'dist')).sort()).toEqual(expected.sort());
  });

  it.each(Object.entries(ENTRY_VALUES))('%s exports the same values from require() and import', (entry, expected) => {
    const names = "console.log(Object.keys(t).sort().join(','))";
    expect(node(['-e', `const t = require('${entry}'); ${names}`])).toBe(expected);
    expect(node(['--input-type=module', '-e', `import * as t from '${entry}'; ${names}`])).toBe(expected);
  });

  it('GatewayError.is holds across the ESM and CommonJS bundles loaded side by side, where instanceof does not', () => {
    const out = node([
      '--input-type=module',
      '-e',
      `import { createRequire } from 'node:module';
       import * as esm from 'express-image-gateway';
       const cjs = createRequire(import.meta.url)('express-image-gateway');
       const fromCjs = cjs.GatewayError.permissionDenied('x');
       const fromEsm = esm.GatewayError.permissionDenied('x');
       console.log(JSON.stringify({
         twoClasses: esm.GatewayError !== cjs.GatewayError,
         instanceofAcross: [fromCjs instanceof esm.GatewayError, fromEsm instanceof cjs.GatewayError],
         isAcross: [esm.GatewayError.is(fromCjs), cjs.GatewayError.is(fromEsm)],
         isOwn: [esm.GatewayError.is(fromEsm), cjs.GatewayError.is(fromCjs)],
         notErrors: [esm.GatewayError.is(new Error('x')), cjs.GatewayError.is({ status: 403, code: 'permission_denied' }), esm.GatewayError.is(null)],
       }));`,
    ]);
    expect(JSON.parse(out)).toEqual({
      twoClasses: true,
      instanceofAcross: [false, false],
      isAcross: [true, true],
      isOwn: [true, true],
      notErrors: [false, false, false],
    });
  });

  it("renders a GatewayError that the host's resolveUpstream made with the other bundle as the host meant it", () => {
    // the router from require(), the host's error from import: a host in ESM whose dependency mounts the gateway in CommonJS
    const out = node([
      '--input-type=module',
      '-e',
      `import { createRequire } from 'node:module';
       import { GatewayError } from 'express-image-gateway';
       import express from 'express';
       const g = createRequire(import.meta.url)('express-image-gateway');
       const router = g.createGatewayRouter({ verifyKey: g.staticKeys({ k: 't' }), resolveUpstream: () => { throw GatewayError.permissionDenied('x-image-2.0 is not on your plan'); } });
       const app = express(); app.use(router);
       const server = app.listen(0, async () => {
         const res = await fetch('http://127.0.0.1:' + server.address().port + '/v1/images/generations', { method: 'POST', headers: { authorization: 'Bearer k', 'content-type': 'application/json' }, body: JSON.stringify({ model: 'x-image-2.0', prompt: 'a cat' }) });
         console.log(res.status, JSON.stringify(await res.json()));
         server.close(); await router.close();
       });`,
    ]);
    expect(out).toBe('403 {"error":{"message":"x-image-2.0 is not on your plan","type":"permission_error","code":"permission_denied","param":null}}');
  });

  it('exports the TaskStore contract suite as express-image-gateway/testing, from require() and import', () => {
    for (const file of ['testing.js', 'testing.cjs', 'testing.d.ts', 'testing.d.cts']) expect(existsSync(path.join(root, 'dist', file))).toBe(true);
    const names = "console.log(Object.keys(t).sort().join(','))";
    const expected = 'describeTaskStoreContract,sampleResult,sampleTask,useSkippingClock';
    expect(node(['-e', `const t = require('express-image-gateway/testing'); ${names}`])).toBe(expected);
    expect(node(['--input-type=module', '-e', `import * as t from 'express-image-gateway/testing'; ${names}`])).toBe(expected);
  });

  it('works from require()', () => {
    const out = node(['-e', `const g = require('express-image-gateway'); const express = require('express'); ${mountAndCall}`]);
    expect(out).toBe('400 {"error":{"message":"model is required","type":"invalid_request_error","code":"invalid_request_error","param":"model"}}');
  });

  it('emits spans into the host SDK from require() and import (the optional peer found by both bundles)', () => {
    const expected = 'POST /v1/images/generations invalid_request_error';
    const cjs = traced((name) => `require('${name}')`);
    expect(node(['-e', `const g = require('express-image-gateway'); const express = require('express'); ${cjs}`])).toBe(expected);
    const esm = traced((name) => `await import('${name}')`);
    expect(node(['--input-type=module', '-e', `import * as g from 'express-image-gateway'; import express from 'express'; ${esm}`])).toBe(expected);
  });

  it('reads Content Credentials from a CommonJS host: the bundle import()s the ESM-only reader', () => {
    // a .cjs file outside the package, finding it by name from the package root, as a dependency would
    const host = path.join(tempDir('provenance-cjs-'), 'host.cjs');
    writeFileSync(
      host,
      `const { createRequire } = require('node:module');
       const find = createRequire(${JSON.stringify(path.join(root, 'package.json'))});
       const g = find('express-image-gateway'); const express = find('express');
       const http = require('node:http'); const { readFileSync } = require('node:fs');
       const image = readFileSync(${JSON.stringify(path.join(root, 'spec/fixtures/c2pa/C.jpg'))}).toString('base64');
       const vendor = http.createServer((req, res) => { req.resume(); req.on('end', () => { res.setHeader('content-type', 'application/json'); res.end(JSON.stringify({ created: 1, data: [{ b64_json: image }] })); }); });
       vendor.listen(0, () => {
         const router = g.createGatewayRouter({ verifyKey: g.staticKeys({ k: 't' }), provenance: {}, resolveUpstream: () => ({ provider: 'openai', baseURL: 'http://127.0.0.1:' + vendor.address().port + '/v1', apiKey: 'sk-vendor-0123456789' }) });
         const app = express(); app.use(router);
         const server = app.listen(0, async () => {
           const res = await fetch('http://127.0.0.1:' + server.address().port + '/v1/images/generations', { method: 'POST', headers: { authorization: 'Bearer k', 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-image-1', prompt: 'a lighthouse' }) });
           const body = await res.json();
           console.log(res.status, JSON.stringify(body.data ? body.data[0].provenance : body));
           server.close(); vendor.close(); await router.close();
         });
       });`,
    );
    const out = node([host]);
    expect(out.slice(0, 4)).toBe('200 ');
    expect(JSON.parse(out.slice(4))).toMatchObject({ c2pa: 'valid', signer: 'C2PA Test Signing Cert', actions: ['c2pa.created'] });
  });

  it('works from import', () => {
    const out = node(['--input-type=module', '-e', `import * as g from 'express-image-gateway'; import express from 'express'; ${mountAndCall}`]);
    expect(out).toBe('400 {"error":{"message":"model is required","type":"invalid_request_error","code":"invalid_request_error","param":"model"}}');
  });
});
