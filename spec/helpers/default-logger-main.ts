// A child process for the default logger's spec: a gateway created with no `logger` (or with
// `logger: false` when the first argument is `silent`) whose resolver throws serves one request, then
// closes; the process prints the answer's status and x-request-id on stdout. Its stderr is what the
// gateway wrote by default.
import express from 'express';
import { createGatewayRouter, staticKeys } from '../../lib/index.js';
import { KEY_A, listen } from './gateway-app.js';

const silent = process.argv[2] === 'silent';
const gateway = createGatewayRouter({
  verifyKey: staticKeys({ [KEY_A]: { id: 'tenant-a' } }),
  resolveUpstream: () => {
    throw new Error('the plans table is unreachable');
  },
  ...(silent ? { logger: false as const } : {}),
});
const app = express();
app.use(gateway);
const server = await listen(app);
const res = await fetch(`${server.url}/v1/images/generations`, {
  method: 'POST',
  headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' },
  body: JSON.stringify({ model: 'x-image-2.0', prompt: 'a fox' }),
});
await res.text();
await server.close();
await gateway.close();
process.stdout.write(`${JSON.stringify({ status: res.status, requestId: res.headers.get('x-request-id') })}\n`);
