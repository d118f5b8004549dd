// The published shape: scripts/build.ts builds ESM + CommonJS + type declarations, and a plain Node process can
// require() and import the package by its name and mount the router in a host app.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

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
}, 60_000);

describe('package build', () => {
  it('emits ESM, CommonJS and declarations for both', () => {
    for (const file of ['index.js', 'index.cjs', 'index.d.ts', 'index.d.cts']) expect(existsSync(path.join(root, 'dist', file))).toBe(true);
  });

  it('exports the TaskStore contract suite as express-image-gateway/testing, from require() and import', () => {
    for (const file of ['testing.js', 'testing.cjs', 'testing.d.ts', 'testing.d.cts']) expect(existsSync(path.join(root, 'dist', file))).toBe(true);
    const names = "console.log(Object.keys(t).sort().join(','))";
    const expected = 'describeTaskStoreContract,sampleResult,sampleTask';
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

  it('works from import', () => {
    const out = node(['--input-type=module', '-e', `import * as g from 'express-image-gateway'; import express from 'express'; ${mountAndCall}`]);
    expect(out).toBe('400 {"error":{"message":"model is required","type":"invalid_request_error","code":"invalid_request_error","param":"model"}}');
  });
});
