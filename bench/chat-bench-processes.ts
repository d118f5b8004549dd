// The pieces a cost bench of the chat route shares (docs/benchmarks.md): a fixed-answer upstream and
// gateways each in its own child process (each prints {"port"} when listening), and autocannon's
// sub-millisecond latencies of POST /v1/chat/completions. Used by telemetry-cost.ts and routing-cost.ts.
import { type ChildProcess, spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import autocannon from 'autocannon';

export function printPort(server: http.Server): void {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
}

/** The upstream: a fixed chat completion, answered at once. */
export function serveUpstream(): void {
  const answer = JSON.stringify({
    id: 'c1',
    object: 'chat.completion',
    created: 1,
    model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
  });
  const server = http.createServer((req, res) => {
    req.resume();
    req.once('end', () => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) });
      res.end(answer);
    });
  });
  server.keepAliveTimeout = 30_000;
  server.listen(0, '127.0.0.1', () => printPort(server));
}

/** Child processes of one bench script: `start` runs the script with `args` and resolves the port it prints. */
export function benchChildren(script: string): { start: (args: string[]) => Promise<number>; stop: () => void } {
  const children: ChildProcess[] = [];
  return {
    start: (args) => {
      const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
      children.push(child);
      return new Promise((resolve, reject) => {
        child.stdout.once('data', (line: Buffer) => resolve((JSON.parse(line.toString()) as { port: number }).port));
        child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}`)));
      });
    },
    stop: () => {
      for (const child of children) child.kill();
    },
  };
}

export interface ChatSample {
  rps: number;
  p50: number;
  p99: number;
}

/** POST /v1/chat/completions for `seconds` over `connections`: req/s and the latency quantiles in ms. */
export async function measureChat(port: number, key: string, seconds: number, connections: number): Promise<ChatSample> {
  const latencies: number[] = [];
  const result = await autocannon({
    url: `http://127.0.0.1:${port}/v1/chat/completions`,
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'chat-bench', messages: [{ role: 'user', content: 'hello' }] }),
    connections,
    duration: seconds,
    // autocannon's own histogram keeps whole milliseconds: too coarse for a sub-millisecond cost
    setupClient: (client) => {
      client.on('response', (_status, _bytes, responseTime) => latencies.push(responseTime));
    },
  });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${result.non2xx} non-2xx answers and ${result.errors} errors on port ${port}`);
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
  return { rps: result.requests.average, p50: at(0.5), p99: at(0.99) };
}

export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
