// What the paid-work specs measure, in one place: the images the usage events account for (given, or
// made and not delivered), what a caller's quota was charged, which generation an answer came from, and a
// client that sends a request and leaves once the upstream started working on it.
import { expect } from 'vitest';
import type { Caller, GatewayRouter, UsageEvent } from '../../lib/index.js';
import type { FakePaidImages } from './fake-paid-images.js';
import { undeliveredImagesOf } from './paid-work-names.js';

const IMAGE_ROUTES = new Set(['images.generations', 'images.edits', 'images.native']);

/** Images the image routes' usage events say the vendors may bill the operator for (`vendorWork.images`). */
export function imagesAccounted(events: readonly UsageEvent[]): number {
  return events.filter((event) => IMAGE_ROUTES.has(event.route)).reduce((sum, event) => sum + (event.vendorWork?.images ?? 0), 0);
}

/** Images the image routes' usage events charge the tenant for: given, lost by its own act, or kept for its retry and not yet settled. */
export function imagesCharged(events: readonly UsageEvent[]): number {
  const routes = events.filter((event) => IMAGE_ROUTES.has(event.route));
  return routes.reduce((sum, event) => sum + event.images + undeliveredImagesOf(event) + (event.keptImages ?? 0) - (event.kept?.images ?? 0), 0);
}

/** How much of a configured quota the caller has used: its limit less what remains (0 when not configured). */
export async function quotaUsed(router: GatewayRouter, name: 'images' | 'video-seconds', caller: Caller = { id: 'tenant-a' }): Promise<number> {
  const state = (await router.quota(caller)).find((item) => item.name === name);
  return state ? state.limit - state.remaining : 0;
}

/** The generation tags (`generation-<id>-<index>`) an answer carries, in order. */
export function generationTags(text: string): string[] {
  return [...text.matchAll(/generation-\d+-\d+/g)].map((match) => match[0]);
}

export interface LeavingPost {
  /** The gateway's origin. */
  url: string;
  path: string;
  key: string;
  /** A JSON text, or a form (sent as multipart with a boundary of fetch's choosing). */
  body: string | FormData;
  headers?: Record<string, string>;
  /** The upstream whose next generation the client waits for before it leaves. */
  upstream: FakePaidImages;
}

/** Sends a request and leaves (closes the connection) once the upstream started a generation for it; resolves 200 ms later. */
export async function postAndLeave(post: LeavingPost): Promise<void> {
  const before = post.upstream.started();
  const controller = new AbortController();
  const sent = fetch(`${post.url}${post.path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${post.key}`, ...(typeof post.body === 'string' ? { 'content-type': 'application/json' } : {}), ...post.headers },
    body: post.body,
    signal: controller.signal,
  }).then(
    (response) => response.arrayBuffer(),
    () => undefined,
  );
  await expect.poll(() => post.upstream.started(), { timeout: 5_000, interval: 10 }).toBeGreaterThan(before);
  controller.abort();
  await sent.catch(() => undefined);
  // a retry sent while the gateway still sees this client connected would be a second request of a
  // connected client (new work, by design): give the gateway a generous moment to see the close
  await new Promise((resolve) => setTimeout(resolve, 200));
}
