// The `vendorWebhooks` option (docs/configuration.md "vendorWebhooks"): the vendors that can call back
// when a task ends (Replicate, fal, Ark) are asked to call a route of the gateway's own, which makes a
// finished task reach its callback without waiting for the next poll (docs/video-tasks-and-callbacks.md
// "Vendor webhooks"). Types only; resolved in gateway/options/vendor-webhook-option.ts.

/**
 * Vendor webhooks. Off by default (tasks are followed by polling only).
 * @example vendorWebhooks: { publicBaseUrl: 'https://gw.example.com/ai', secret: process.env.VENDOR_WEBHOOK_SECRET! }
 */
export interface VendorWebhookOptions {
  /**
   * Required. The gateway's public base URL as the vendors reach it, the router's mount path included
   * (`https://gw.example.com/ai` for a router mounted at `/ai`): an http or https URL with no query or
   * fragment. The vendors are given `{publicBaseUrl}/v1/vendor-webhooks/{provider}/{taskId}/{token}`.
   * @example publicBaseUrl: 'https://gw.example.com/ai'
   */
  publicBaseUrl: string;
  /**
   * Required. The key of the per-task tokens (HMAC-SHA256 of the task id and the provider): at least
   * 32 bytes. Changing it makes the webhooks of tasks already submitted fail (their polls still end them).
   * @example secret: process.env.VENDOR_WEBHOOK_SECRET!
   */
  secret: string;
  /**
   * Where fal publishes the public keys its webhooks are signed with (a JSON Web Key Set). Default
   * `https://rest.alpha.fal.ai/.well-known/jwks.json`; tests point it at a fake.
   * @example falJwksUrl: 'https://rest.alpha.fal.ai/.well-known/jwks.json'
   */
  falJwksUrl?: string;
}
