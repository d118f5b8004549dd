// A plain node:http client for the fault suite: one JSON POST, the whole answer as text (SSE too),
// and a hard deadline, so an answer the gateway never finishes fails the test instead of hanging it.
import http from 'node:http';

export interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The whole body as received. */
  text: string;
  /** The body parsed as JSON when it is JSON; undefined otherwise. */
  json: unknown;
  /** Milliseconds from sending to the end of the body. */
  ms: number;
}

export interface PostOptions {
  key: string;
  agent?: http.Agent;
  /** The request fails with "hung" when the answer has not ended by then. Default 8 s. */
  deadlineMs?: number;
}

export function postJson(url: string, body: unknown, options: PostOptions): Promise<RawAnswer> {
  const deadlineMs = options.deadlineMs ?? 8_000;
  const started = performance.now();
  return new Promise<RawAnswer>((resolve, reject) => {
    const req = http.request(
      url,
      { method: 'POST', agent: options.agent, headers: { authorization: `Bearer ${options.key}`, 'content-type': 'application/json' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          clearTimeout(timer);
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          if (String(res.headers['content-type']).includes('json')) {
            try {
              json = JSON.parse(text);
            } catch {
              json = undefined;
            }
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json, ms: performance.now() - started });
        });
        res.on('error', (error) => {
          clearTimeout(timer);
          reject(error);
        });
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`${url}: no complete answer within ${deadlineMs} ms (hung)`));
    }, deadlineMs);
    req.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    req.end(JSON.stringify(body));
  });
}
