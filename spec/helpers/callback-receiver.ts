// A callback receiver on loopback: records every delivery (headers and raw body) and fails the first
// `failFirst` attempts with 500, to prove retries.
import type { IncomingHttpHeaders } from 'node:http';
import { type FakeUpstream, startFakeUpstream } from './fake-upstream.js';

interface Delivery {
  headers: IncomingHttpHeaders;
  body: string;
  status: number;
}

export interface CallbackReceiver extends FakeUpstream {
  url: string;
  deliveries: Delivery[];
  /** How many more attempts to fail. */
  failFirst: number;
  /** Resolves once `count` deliveries were answered 2xx. */
  accepted(count: number, timeoutMs?: number): Promise<Delivery[]>;
}

export async function startCallbackReceiver(failFirst = 0): Promise<CallbackReceiver> {
  const deliveries: Delivery[] = [];
  // eslint-disable-next-line prefer-const -- assigned once, after the server it is read from exists
  let receiver: CallbackReceiver | undefined;
  const fake = await startFakeUpstream((request, res) => {
    const status = receiver!.failFirst > 0 ? 500 : 204;
    if (status === 500) receiver!.failFirst -= 1;
    deliveries.push({ headers: request.headers, body: request.body.toString('utf8'), status });
    res.writeHead(status);
    res.end();
  });
  receiver = Object.assign(fake, {
    url: `${fake.origin}/hooks/video`,
    deliveries,
    failFirst,
    async accepted(count: number, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const ok = deliveries.filter((delivery) => delivery.status < 300);
        if (ok.length >= count) return ok;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      throw new Error(`only ${deliveries.filter((d) => d.status < 300).length} of ${count} deliveries accepted in ${timeoutMs} ms`);
    },
  });
  return receiver;
}
