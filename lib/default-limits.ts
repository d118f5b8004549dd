// The default limits (GatewayOptions.limits): a leaf, so the transport and the inbound side can fall back
// on them without importing option resolution.
import type { GatewayLimits } from './options/request-limits.js';

export const DEFAULT_LIMITS: Readonly<GatewayLimits> = Object.freeze({
  jsonBodyBytes: 48 * 1024 * 1024,
  dataUrlBytes: 10 * 1024 * 1024,
  imagesPerRequest: 3,
  uploadFileBytes: 10 * 1024 * 1024,
  downloadBytes: 32 * 1024 * 1024,
  downloadTimeoutMs: 60_000,
  upstreamTimeoutMs: 300_000,
  upstreamResponseBytes: 16 * 1024 * 1024,
  jsonMembers: 100_000,
  jsonTextBytes: 8 * 1024 * 1024,
  bodyReadTimeoutMs: 60_000,
  inFlightPerCaller: 64,
  upstreamSockets: 256,
  upstreamQueue: 256,
  clientStallMs: 30_000,
  streamKeepAliveMs: 15_000,
});
