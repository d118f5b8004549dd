// Two more DashScope upstreams for the example's `x-image-2.0`, so `npm start`'s log shows health-aware
// routing at work (docs/routing-and-health.md): a flapping one, which relays to the simulated DashScope
// while up and answers 503 while down (a refusal before any work, so the gateway falls back and its
// breaker opens after 5 of them), and one whose account is blocked, which answers DashScope's
// `Arrearage` to everything (an operator-account failure: open at once, for every tenant, 5 minutes).
// The caller always gets its image from the next upstream; only the log tells the story.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { type Listening, listenOnLoopback, sendJson } from './simulation-http.js';

export interface RoutingSimulations {
  /** Relays to the simulated DashScope, except while down. */
  flapping: Listening & { baseURL: string };
  /** Refuses every call: the operator's account is blocked. */
  blocked: Listening & { baseURL: string };
  close(): Promise<void>;
}

/** Up 30 s, then down 30 s, from the start: traffic leaves it and comes back once a minute. */
const UP_MS = 30_000;
const DOWN_MS = 30_000;

export async function startRoutingSimulations(dashscopeBaseURL: string, timing: { upMs?: number; downMs?: number } = {}): Promise<RoutingSimulations> {
  const target = new URL(dashscopeBaseURL);
  const upMs = timing.upMs ?? UP_MS;
  const period = upMs + (timing.downMs ?? DOWN_MS);
  const started = Date.now();
  const flapping = await listenOnLoopback((req, res) => {
    if ((Date.now() - started) % period >= upMs) return sendJson(res, 503, { request_id: 'flapping', code: 'ServiceUnavailable', message: 'The simulated upstream is down for a while.' });
    relay(req, res, target);
  });
  const blocked = await listenOnLoopback((_req, res) => sendJson(res, 400, { request_id: 'blocked', code: 'Arrearage', message: 'Access denied, please make sure your account is in good standing.' }));
  const path = target.pathname.replace(/\/$/, '');
  return {
    flapping: { ...flapping, baseURL: `${flapping.origin}${path}` },
    blocked: { ...blocked, baseURL: `${blocked.origin}${path}` },
    close: async () => {
      await Promise.all([flapping.close(), blocked.close()]);
    },
  };
}

/** Passes the request to the simulated DashScope as it came, and its answer back as it comes (streams too). */
function relay(req: IncomingMessage, res: ServerResponse, target: URL): void {
  const outbound = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host } }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
  outbound.on('error', () => res.destroy());
  req.pipe(outbound);
}
