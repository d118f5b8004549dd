// A real HTTP server on 127.0.0.1:0 that records every request it receives and answers with a
// scripted responder. The protocol-specific fakes (DashScope, OpenAI, Ark) are built on it.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** The body parsed as JSON, when it is JSON. */
  json?: unknown;
}

export type Responder = (request: RecordedRequest, res: ServerResponse, raw: IncomingMessage) => void | Promise<void>;

export interface FakeUpstream {
  /** http://127.0.0.1:<port> */
  origin: string;
  requests: RecordedRequest[];
  /** Answers the next request with `responder` instead of the default (queue, first in first out). */
  next(responder: Responder): void;
  /** Requests to the API (not to downloads of result images). */
  apiRequests(): RecordedRequest[];
  close(): Promise<void>;
}

export async function startFakeUpstream(defaultResponder: Responder, isApiPath: (path: string) => boolean = () => true): Promise<FakeUpstream> {
  const requests: RecordedRequest[] = [];
  const queue: Responder[] = [];
  const server = http.createServer((raw, res) => {
    const chunks: Buffer[] = [];
    raw.on('data', (chunk: Buffer) => chunks.push(chunk));
    raw.on('end', () => {
      const body = Buffer.concat(chunks);
      const recorded: RecordedRequest = { method: raw.method ?? '', path: raw.url ?? '', headers: raw.headers, body };
      try {
        recorded.json = body.length > 0 ? JSON.parse(body.toString('utf8')) : undefined;
      } catch {
        recorded.json = undefined;
      }
      requests.push(recorded);
      const responder = isApiPath(recorded.path) ? (queue.shift() ?? defaultResponder) : defaultResponder;
      Promise.resolve(responder(recorded, res, raw)).catch((error: unknown) => {
        res.destroy(error instanceof Error ? error : new Error(String(error)));
      });
    });
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    next: (responder) => queue.push(responder),
    apiRequests: () => requests.filter((request) => isApiPath(request.path)),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}
