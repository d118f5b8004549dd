// Vendor webhooks against polling (docs/benchmarks.md "Vendor webhooks"; `npm run bench`, part
// `webhooks`, or `npx tsx bench/vendor-webhooks.ts`): the time from the vendor finishing a task to the
// tenant's callback arriving, for fal video tasks with a callback, with `vendorWebhooks` off (the next
// poll finds the end) and on (fal's signed call makes the gateway read the task at once). One process:
// a fake fal queue, fal's published keys and the tenant's receiver are real HTTP servers on loopback;
// polls run every BENCH_POLL_MS (2,000 by default, so the run stays short: with the default schedule,
// 15 s once a task is older than 2.5 min, the polling figure grows in proportion). Each task ends at a
// random moment of its poll interval, one task at a time.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createGatewayRouter, staticKeys } from '../lib/index.js';
import { startCallbackReceiver } from '../spec/helpers/callback-receiver.js';
import { FAL_KEY, startFakeFal } from '../spec/helpers/fake-fal.js';
import { falWebhookBody, startFakeFalKeys } from '../spec/helpers/vendor-webhook-signers.js';

const KEY = 'sk-bench-vendor-webhooks-0123456789';
const MODEL = 'fal-ai/kling-video/v2.1/standard/text-to-video';

export interface VendorWebhookFigures {
  pollMs: number;
  tasks: number;
  polling: { p50: number; max: number };
  webhooks: { p50: number; max: number };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (values: number[], q: number): number => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))]!;

/** The milliseconds from fal finishing each of `tasks` tasks to its `succeeded` callback, one gateway configuration. */
async function measure(withWebhooks: boolean, tasks: number, pollMs: number): Promise<number[]> {
  const fal = await startFakeFal();
  const keys = await startFakeFalKeys();
  const receiver = await startCallbackReceiver();
  fal.setQueueReads(0);
  const router = createGatewayRouter({
    verifyKey: staticKeys({ [KEY]: { id: 'bench' } }),
    resolveUpstream: () => ({ provider: 'fal', baseURL: fal.origin, apiKey: FAL_KEY, model: MODEL }),
    logger: false,
    callbacks: { allowLocal: true, retryBaseMs: 10, retryMaxMs: 50, pollIntervalsMs: { video: [pollMs] } },
    ...(withWebhooks ? { vendorWebhooks: { publicBaseUrl: 'https://gw.example.com', secret: 'bench-vendor-webhook-secret-0123456789ab', falJwksUrl: keys.jwksUrl } } : {}),
  });
  const app = express().use(router);
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const latencies: number[] = [];
  try {
    for (let index = 0; index < tasks; index += 1) {
      fal.setRunning(true);
      const created = await fetch(`${base}/api/v3/contents/generations/tasks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: MODEL, content: [{ type: 'text', text: `boat ${index}` }], callback_url: receiver.url }),
      });
      const { id } = (await created.json()) as { id: string };
      const submit = fal.requests.filter((entry) => entry.method === 'POST').at(-1)!;
      const requestId = fal.inputs().at(-1)!.requestId;
      // the vendor finishes at a random moment of a poll interval
      await sleep(pollMs + Math.random() * pollMs);
      fal.setRunning(false);
      const finished = performance.now();
      if (withWebhooks) {
        const path = new URL(new URL(submit.path, 'http://fal.local').searchParams.get('fal_webhook')!).pathname;
        const body = falWebhookBody(requestId);
        await fetch(`${base}${path}`, { method: 'POST', headers: keys.headersFor(body, requestId), body });
      }
      while (!receiver.deliveries.some((delivery) => delivery.body.includes(id) && delivery.body.includes('"succeeded"'))) await sleep(2);
      latencies.push(performance.now() - finished);
    }
  } finally {
    await router.close();
    await new Promise((resolve) => server.close(resolve));
    await receiver.close();
    await keys.close();
    await fal.close();
  }
  return latencies;
}

export async function measureVendorWebhooks(quick: boolean): Promise<VendorWebhookFigures> {
  const pollMs = Number(process.env.BENCH_POLL_MS ?? 2_000);
  const tasks = quick ? 3 : 8;
  const polling = await measure(false, tasks, pollMs);
  const webhooks = await measure(true, tasks, pollMs);
  return {
    pollMs,
    tasks,
    polling: { p50: percentile(polling, 0.5), max: Math.max(...polling) },
    webhooks: { p50: percentile(webhooks, 0.5), max: Math.max(...webhooks) },
  };
}

export function printVendorWebhookFigures(figures: VendorWebhookFigures): void {
  console.log(`\nvendor finishing -> tenant's callback (fal video tasks, polls every ${figures.pollMs} ms, ${figures.tasks} tasks each):`);
  console.log('| path | p50 | max |');
  console.log('|---|---|---|');
  console.log(`| polling only | ${figures.polling.p50.toFixed(0)} ms | ${figures.polling.max.toFixed(0)} ms |`);
  console.log(`| vendor webhooks | ${figures.webhooks.p50.toFixed(1)} ms | ${figures.webhooks.max.toFixed(1)} ms |`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const figures = await measureVendorWebhooks(process.argv.includes('--quick'));
  printVendorWebhookFigures(figures);
  console.log(`BENCH_VENDOR_WEBHOOKS ${JSON.stringify(figures)}`);
}
