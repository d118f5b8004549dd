// The gateway's own answer to an image request (contract §2.4), whichever provider generated the images:
// the native image capability of a provider translates into it, and the result pipeline fills b64_json.
import type { ProvenanceReport } from '../options/provenance-options.js';

/** contract §2.4 */
export interface ImageData {
  url: string;
  b64_json: string;
  revised_prompt: string;
  /** With the `provenance` option: the image's Content Credentials (docs/provenance.md). */
  provenance?: ProvenanceReport;
}

export interface ImageGenerationResponse {
  created: number;
  data: ImageData[];
  /** `storage_error`: set when durable results are on and the store failed (the URLs are the upstream's). */
  extra: { request_id: string; storage_error?: string };
  /** `WxH` of each image, when the upstream said (Ark): for the usage event, never written to the caller. */
  sizes?: string[];
  /** The upstream's usage counters (Ark): for the usage event, never written to the caller. */
  usage?: Record<string, number>;
}
