// The public surface of the package: re-exports only (style.md: one screen).
export { createGatewayRouter, type GatewayRouter } from './create-gateway-router.js';
export { staticKeys } from './auth/static-keys.js';
export { GatewayError, type GatewayErrorBody } from './errors/gateway-error.js';
export { GatewayConfigError } from './errors/config-error.js';
export { ERROR_CODES, type ErrorCode } from './errors/error-codes.js';
export { DEFAULT_LIMITS, type GatewayOptions } from './options.js';
export { DEFAULT_IMAGE_MODELS } from './images/model-families.js';
export type {
  Caller,
  GatewayLimits,
  ImageModelFamily,
  Logger,
  ProviderName,
  ResolveUpstream,
  ResolveUpstreamInput,
  RouteName,
  Upstream,
  UsageEvent,
  VerifyKey,
} from './types.js';
