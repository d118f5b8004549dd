// A raw HTTP client for hostile-input tests: repeated headers (array values are sent as several
// header lines), Buffer bodies sent byte for byte, chunked bodies without Content-Length, keep-alive.
import http from 'node:http';

export interface RawRequest {
  method?: string;
  /** Sent exactly as given (no normalization, no encoding). */
  path: string;
  headers?: http.OutgoingHttpHeaders;
  body?: string | Buffer;
  /** Send the body with Transfer-Encoding: chunked, in pieces of this many bytes. */
  chunkBytes?: number;
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** Milliseconds from sending to the end of the response. */
  ms: number;
}

export interface RawClient {
  send(request: RawRequest): Promise<RawResponse>;
  close(): void;
}

export function rawClient(origin: string): RawClient {
  const { hostname, port } = new URL(origin);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  return {
    send: (request) =>
      new Promise<RawResponse>((resolve, reject) => {
        const started = performance.now();
        const body = typeof request.body === 'string' ? Buffer.from(request.body, 'utf8') : request.body;
        // an undefined value means "no such header" (Node would refuse it)
        const headers: http.OutgoingHttpHeaders = Object.fromEntries(Object.entries(request.headers ?? {}).filter(([, value]) => value !== undefined));
        if (body !== undefined && request.chunkBytes === undefined && headers['content-length'] === undefined) headers['content-length'] = body.length;
        let answered = false;
        const req = http.request({ host: hostname, port, method: request.method ?? 'POST', path: request.path, headers, agent }, (res) => {
          answered = true;
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - started }));
          res.on('error', reject);
        });
        // the server may answer (413) and close before the whole body is written: the answer counts
        req.on('error', (error) => {
          if (!answered) reject(error);
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
      }),
    close: () => agent.destroy(),
  };
}
