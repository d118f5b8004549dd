// The HTTP plumbing the simulated upstreams share: listen on loopback, read a bounded JSON body, answer
// JSON, serve a stored file (with byte ranges, which browsers use for video), and close with the
// keep-alive sockets the gateway holds. Each simulation keeps only its own vendor's wire format.
import http, { type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Listening {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  close(): Promise<void>;
}

/** Starts a server on 127.0.0.1 (the simulations are for this machine only) on a free port. */
export async function listenOnLoopback(listener: RequestListener, port = 0): Promise<Listening> {
  const server = http.createServer(listener);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${address.port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // the gateway keeps sockets alive for reuse; without this, close() waits for them to idle out
        server.closeAllConnections();
      }),
  };
}

export class BodyTooLarge extends Error {}
export class BodyNotJson extends Error {}

/** The raw body, refused past `maxBytes` (a simulation must not be a memory sink either). */
export async function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const piece of req) {
    const buffer = piece as Buffer;
    size += buffer.length;
    if (size > maxBytes) throw new BodyTooLarge(`The request body is larger than ${maxBytes} bytes.`);
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}

export function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    throw new BodyNotJson('The request body is not valid JSON.');
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers }).end(text);
}

/** Serves bytes with one optional `Range: bytes=a-b`, as Chromium asks for media. */
export function sendFile(req: IncomingMessage, res: ServerResponse, bytes: Buffer, contentType: string): void {
  const range = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? '');
  const common = { 'content-type': contentType, 'accept-ranges': 'bytes', 'cache-control': 'private, max-age=3600' };
  if (range && (range[1] !== '' || range[2] !== '')) {
    const start = range[1] === '' ? Math.max(0, bytes.length - Number(range[2])) : Number(range[1]);
    const end = range[1] === '' || range[2] === '' ? bytes.length - 1 : Math.min(Number(range[2]), bytes.length - 1);
    if (start > end || start >= bytes.length) {
      res.writeHead(416, { 'content-range': `bytes */${bytes.length}` }).end();
      return;
    }
    res.writeHead(206, { ...common, 'content-range': `bytes ${start}-${end}/${bytes.length}`, 'content-length': end - start + 1 });
    res.end(req.method === 'HEAD' ? undefined : bytes.subarray(start, end + 1));
    return;
  }
  res.writeHead(200, { ...common, 'content-length': bytes.length }).end(req.method === 'HEAD' ? undefined : bytes);
}

/** The Bearer key of a request, or undefined. */
export function bearerKey(req: IncomingMessage): string | undefined {
  return /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A bounded store of generated files: results are short-lived upstream too, memory stays flat. */
export class KeptFiles {
  private readonly files = new Map<string, Buffer>();
  constructor(private readonly max: number) {}
  set(id: string, bytes: Buffer): void {
    this.files.set(id, bytes);
    // a Map iterates in insertion order, so the first key is the oldest file
    while (this.files.size > this.max) this.files.delete(this.files.keys().next().value!);
  }
  get(id: string): Buffer | undefined {
    return this.files.get(id);
  }
}
