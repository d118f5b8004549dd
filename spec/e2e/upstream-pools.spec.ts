// The outbound client's pools (lib/transport/upstream-http.ts, docs/security.md "Tenants are isolated"): a lookup
// belongs to the pool that opens connections with it, so a pinned address never reuses a kept-alive
// connection opened for another address or for an unchecked request to the same origin, and a
// request cancelled while it runs leaves no connection behind.
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UpstreamHttp } from '../../lib/transport/upstream-http.js';

/** A server on every loopback address that answers with the local address the connection came to. */
let server: http.Server;
let port = 0;
const sockets = new Set<Socket>();
beforeAll(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(req.socket.localAddress);
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const call = { provider: 'test', method: 'GET' as const, timeoutMs: 5_000, maxBytes: 1_000 };

describe('upstream pools', () => {
  it('a pinned address gets connections of its own: pinned to 127.0.0.2 after 127.0.0.1 (kept alive) and an unpinned call, each reaches its own address', async () => {
    const client = new UpstreamHttp();
    try {
      const url = `http://localhost:${port}/where`;
      const first = await client.request({ ...call, url, pinnedAddress: { address: '127.0.0.1', family: 4 } });
      const second = await client.request({ ...call, url, pinnedAddress: { address: '127.0.0.2', family: 4 } });
      const again = await client.request({ ...call, url, pinnedAddress: { address: '127.0.0.1', family: 4 } });
      expect([first.body.toString(), second.body.toString(), again.body.toString()]).toEqual(['127.0.0.1', '127.0.0.2', '127.0.0.1']);
      // three pools: 127.0.0.1 pinned (its connection reused), 127.0.0.2 pinned, and the unpinned one
      await client.request({ ...call, url: `http://127.0.0.1:${port}/where` });
      expect(sockets.size).toBe(3);
    } finally {
      client.close();
    }
  });

  it('a call cancelled while it runs leaves no connection open (no reconnect for the aborted request)', async () => {
    const silent = http.createServer(() => {});
    const open = new Set<Socket>();
    silent.on('connection', (socket: Socket) => {
      open.add(socket);
      socket.once('close', () => open.delete(socket));
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const client = new UpstreamHttp();
    try {
      const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/never`;
      await expect(client.request({ ...call, url, timeoutMs: 200 })).rejects.toMatchObject({ code: 'upstream_timeout' });
      const until = Date.now() + 2_000;
      while (open.size > 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(open.size).toBe(0);
    } finally {
      client.close();
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});
