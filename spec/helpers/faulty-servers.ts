// Upstreams that misbehave on purpose, for the fault suite: a port that refuses connections, raw TCP
// servers that stay silent or reset, and a body writer that streams until the reader hangs up. Each
// listens on 127.0.0.1:0 and records what happened to every connection it accepted.
import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import net, { type AddressInfo } from 'node:net';

interface ConnectionRecord {
  openedAt: number;
  /** performance.now() when the socket closed; undefined while it is open. */
  closedAt?: number;
  bytesRead: number;
}

export interface TcpFault {
  /** http://127.0.0.1:<port> */
  origin: string;
  connections: ConnectionRecord[];
  /** Resolves once every accepted connection is closed, or rejects after `timeoutMs`. */
  allClosed(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** A raw TCP server; `onConnection` decides how the upstream misbehaves. */
export async function startTcpFault(onConnection: (socket: net.Socket) => void): Promise<TcpFault> {
  const connections: ConnectionRecord[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    const record: ConnectionRecord = { openedAt: performance.now(), bytesRead: 0 };
    connections.push(record);
    sockets.add(socket);
    socket.on('data', (chunk: Buffer) => (record.bytesRead += chunk.length));
    socket.on('error', () => {});
    socket.once('close', () => {
      record.closedAt = performance.now();
      sockets.delete(socket);
    });
    onConnection(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    connections,
    async allClosed(timeoutMs = 2_000) {
      const deadline = performance.now() + timeoutMs;
      while (connections.some((connection) => connection.closedAt === undefined)) {
        if (performance.now() > deadline) throw new Error(`${connections.filter((c) => c.closedAt === undefined).length} upstream connection(s) still open after ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Accepts the connection and reads the request, but never writes a byte. */
export function startSilentServer(): Promise<TcpFault> {
  return startTcpFault((socket) => socket.resume());
}

/** Accepts the connection, waits for the request, then resets it (RST) before answering anything. */
export function startResettingServer(): Promise<TcpFault> {
  return startTcpFault((socket) => socket.once('data', () => socket.resetAndDestroy()));
}

/** A port nothing listens on: bound, then closed, so a connection to it is refused. */
export async function refusedOrigin(): Promise<string> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

export interface StreamedBody {
  /** Bytes handed to the socket before the reader went away (or `limit` was reached). */
  written: number;
  /** performance.now() when the response closed. */
  closedAt: number;
}

const ZEROS = Buffer.alloc(64 * 1024);

/**
 * Writes `chunk` again and again (never buffering more than one socket's worth: it waits for
 * 'drain') until `limit` bytes are out or the reader closes the connection. Headers are the caller's.
 */
export async function streamUntilClosed(res: ServerResponse, limit = Number.POSITIVE_INFINITY, chunk: Buffer = ZEROS): Promise<StreamedBody> {
  let written = 0;
  let closed = res.destroyed;
  let closedAt = 0;
  const onClose = (): void => {
    closed = true;
    closedAt = performance.now();
  };
  res.once('close', onClose);
  while (!closed && written < limit) {
    const piece = limit - written < chunk.length ? chunk.subarray(0, limit - written) : chunk;
    written += piece.length;
    if (!res.write(piece)) {
      // either the reader makes room or it hangs up; both end the wait
      await new Promise<void>((resolve) => {
        const done = (): void => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.on('drain', done);
        res.on('close', done);
      });
    }
  }
  if (!closed) {
    res.end();
    await once(res, 'close').catch(() => undefined);
  }
  return { written, closedAt: closedAt || performance.now() };
}
