// The one raw HTTP client of the specs (node:http, no normalization): for what supertest and fetch hide.
// Repeated headers (array values are sent as several header lines), Buffer bodies sent byte for byte,
// chunked bodies without Content-Length, keep-alive agents, each chunk's arrival time (SSE), a client
// that aborts or stalls, and a hard deadline, so an answer the gateway never finishes fails the test
// instead of hanging it. `postJson` is its shorthand for one authenticated JSON POST. Below HTTP,
// `rawSocket` writes bytes no HTTP client would send (a head and half a body, then silence) or never reads.
import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';

export interface RawRequest {
  method?: string;
  /** Sent exactly as given (no normalization, no encoding). */
  path: string;
  headers?: http.OutgoingHttpHeaders;
  body?: string | Buffer;
  /** Send the body with Transfer-Encoding: chunked, in pieces of this many bytes. */
  chunkBytes?: number;
  /** The request fails with "hung" when the answer has not ended by then. Default: no deadline. */
  deadlineMs?: number;
  /** Overrides the client's agent for this request (`false`: a fresh connection). */
  agent?: http.Agent | false;
  signal?: AbortSignal;
  /** Called with the request once it is sent, e.g. to destroy it. */
  onRequest?(req: http.ClientRequest): void;
  /** Called with the response before its body is read, e.g. to pause it or stop on the first byte. */
  onResponse?(res: http.IncomingMessage, req: http.ClientRequest): void;
}

/** What any client's answer has (specs that mix this client with supertest build these too). */
export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The whole body as received. */
  text: string;
  /** Milliseconds from sending to the end of the response. */
  ms: number;
}

/** What this client answers: the response, its body as JSON, and its chunks as they came. */
export interface RawAnswer extends RawResponse {
  /** The body parsed as JSON when the content type says JSON and it parses; undefined otherwise. */
  json: unknown;
  /** Each chunk as it arrived, with performance.now() at arrival. */
  chunks: Array<{ at: number; text: string }>;
}

export interface RawClient {
  send(request: RawRequest): Promise<RawAnswer>;
  close(): void;
}

/** A client for one origin; by default over a keep-alive agent of its own, which `close()` destroys. */
export function rawClient(origin: string, agent: http.Agent = new http.Agent({ keepAlive: true, maxSockets: 4 })): RawClient {
  return { send: (request) => rawRequest(origin, { agent, ...request }), close: () => agent.destroy() };
}

export interface PostOptions {
  key: string;
  agent?: http.Agent;
  /** Default 8 s. */
  deadlineMs?: number;
}

/** One JSON POST with a bearer key and a deadline (8 s by default). */
export function postJson(url: string, body: unknown, options: PostOptions): Promise<RawAnswer> {
  const { origin, pathname, search } = new URL(url);
  return rawRequest(origin, {
    path: pathname + search,
    agent: options.agent,
    deadlineMs: options.deadlineMs ?? 8_000,
    headers: { authorization: `Bearer ${options.key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** One request to `origin` (http://host:port), over Node's global agent unless `request.agent` says otherwise. */
export function rawRequest(origin: string, request: RawRequest): Promise<RawAnswer> {
  const { hostname, port } = new URL(origin);
  return new Promise<RawAnswer>((resolve, reject) => {
    const started = performance.now();
    const body = typeof request.body === 'string' ? Buffer.from(request.body, 'utf8') : request.body;
    // an undefined value means "no such header" (Node would refuse it)
    const headers: http.OutgoingHttpHeaders = Object.fromEntries(Object.entries(request.headers ?? {}).filter(([, value]) => value !== undefined));
    if (body !== undefined && request.chunkBytes === undefined && headers['content-length'] === undefined) headers['content-length'] = body.length;
    let answered = false;
    let timer: NodeJS.Timeout | undefined;
    const fail = (error: Error): void => {
      clearTimeout(timer);
      reject(error);
    };
    const req = http.request({ host: hostname, port, method: request.method ?? 'POST', path: request.path, headers, agent: request.agent, signal: request.signal }, (res) => {
      answered = true;
      const chunks: RawAnswer['chunks'] = [];
      res.on('data', (chunk: Buffer) => chunks.push({ at: performance.now(), text: chunk.toString('utf8') }));
      res.on('end', () => {
        clearTimeout(timer);
        const text = chunks.map((chunk) => chunk.text).join('');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: parseJson(res.headers, text), chunks, ms: performance.now() - started });
      });
      res.on('error', fail);
      // a connection cut mid-body ends the response without 'end': that is a failure, not a hang
      res.on('close', () => {
        if (!res.complete) fail(new Error(`${origin}${request.path}: the connection closed before the answer ended`));
      });
      request.onResponse?.(res, req);
    });
    if (request.deadlineMs !== undefined) {
      const deadlineMs = request.deadlineMs;
      timer = setTimeout(() => {
        req.destroy();
        reject(new Error(`${origin}${request.path}: no complete answer within ${deadlineMs} ms (hung)`));
      }, deadlineMs);
    }
    // the server may answer (413) and close before the whole body is written: the answer counts
    req.on('error', (error) => {
      if (!answered) fail(error);
    });
    if (body === undefined) {
      req.end();
    } else if (request.chunkBytes !== undefined) {
      const size = request.chunkBytes;
      let offset = 0;
      const writeMore = (): void => {
        while (offset < body.length) {
          const piece = body.subarray(offset, offset + size);
          offset += size;
          if (!req.write(piece)) {
            req.once('drain', writeMore);
            return;
          }
        }
        req.end();
      };
      writeMore();
    } else {
      req.end(body);
    }
    request.onRequest?.(req);
  });
}

export interface RawSocketOptions {
  /** Read nothing: the socket is paused before the bytes go, so what the server writes backs up. Default false. */
  paused?: boolean;
}

/**
 * Opens a TCP connection to `origin` (http://host:port) and writes `bytes` exactly as given. A failed connect
 * rejects; later socket errors are swallowed (a test that provokes a cut connection watches 'close' itself).
 * The caller destroys the socket.
 */
export async function rawSocket(origin: string, bytes: string | Buffer, options: RawSocketOptions = {}): Promise<net.Socket> {
  const { hostname, port } = new URL(origin);
  const socket = net.connect(Number(port), hostname);
  await once(socket, 'connect');
  socket.on('error', () => {});
  if (options.paused) socket.pause();
  socket.write(bytes);
  return socket;
}

/**
 * Writes `bytes` over a raw socket and resolves with all the server sent once it closes the connection. The
 * deadline (8 s by default) only fails a test whose server neither answers nor closes, instead of hanging it.
 */
export async function rawSocketExchange(origin: string, bytes: string | Buffer, deadlineMs = 8_000): Promise<string> {
  const socket = await rawSocket(origin, bytes);
  return new Promise<string>((resolve, reject) => {
    const received: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(received).toString('utf8')));
    socket.setTimeout(deadlineMs, () => socket.destroy(new Error(`${origin}: the server neither answered nor closed the connection within ${deadlineMs} ms`)));
  });
}

function parseJson(headers: http.IncomingHttpHeaders, text: string): unknown {
  if (!String(headers['content-type']).includes('json')) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
