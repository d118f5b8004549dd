// Small checks on request fields that several routes share.
import { GatewayError } from '../../errors/gateway-error.js';

/** contract §7: a model name is a non-empty string, otherwise exactly `model is required`. */
export function requireModel(value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') throw GatewayError.modelRequired();
  return value;
}
