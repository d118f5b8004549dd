// The URLs vendors are given to call back (docs/video-tasks-and-callbacks.md "Vendor webhooks"):
// `{publicBaseUrl}/v1/vendor-webhooks/{provider}/{taskId}/{token}`, where the token is the base64url
// HMAC-SHA256 of the task id and the provider under `vendorWebhooks.secret`. Only the gateway can make
// one, so a call with a wrong token is refused before anything is read or written; and the slower
// cadence of the polls that remain the fallback while such a call is expected.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { capabilityOfProvider } from '../../providers/registry.js';
import type { ResolvedVendorWebhooks } from '../options/vendor-webhook-option.js';

/** The route's path under the router (docs/routes.md). */
export const VENDOR_WEBHOOK_ROUTE = '/v1/vendor-webhooks/:provider/:taskId/:token';

/** While a vendor is expected to call back, polls wait this many times the schedule's interval. */
export const FALLBACK_POLL_FACTOR = 4;

/** The token of one task at one provider. */
export function vendorWebhookToken(secret: string, taskId: string, provider: string): string {
  return createHmac('sha256', secret).update(`${taskId}\n${provider}`).digest('base64url');
}

/** Whether `given` is the token of that task at that provider, compared in constant time. */
export function isVendorWebhookToken(secret: string, taskId: string, provider: string, given: string): boolean {
  const expected = Buffer.from(vendorWebhookToken(secret, taskId, provider), 'utf8');
  const presented = Buffer.from(given, 'utf8');
  return presented.length === expected.length && timingSafeEqual(presented, expected);
}

/** The URL a provider that calls back is given for a task; undefined when vendor webhooks are off or the provider never calls back. */
export function vendorWebhookUrl(webhooks: ResolvedVendorWebhooks | undefined, provider: string, taskId: string): string | undefined {
  if (!webhooks || !capabilityOfProvider(provider, 'webhooks')) return undefined;
  return `${webhooks.publicBaseUrl}/v1/vendor-webhooks/${encodeURIComponent(provider)}/${encodeURIComponent(taskId)}/${vendorWebhookToken(webhooks.secret, taskId, provider)}`;
}

/** A poll's delay for a task whose vendor was asked to call back: the fallback's slower cadence. */
export function fallbackPollDelay(record: { upstream: { callsBack?: boolean } }, delayMs: number): number {
  return record.upstream.callsBack === true ? delayMs * FALLBACK_POLL_FACTOR : delayMs;
}
