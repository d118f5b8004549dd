// The one check of a task's `callback_url` (contract §5.5, §6.3), for video and image tasks alike:
// the URL rules of callback-url.ts, then, unless local targets are allowed, a name that resolves to
// public addresses only. A failure is the 400 naming `callback_url`.
import { GatewayError } from '../../errors/gateway-error.js';
import { checkCallbackUrl } from '../../security/callback-url.js';
import { NonPublicAddressError, resolvePublicAddress } from '../../security/public-url.js';
import type { ResolvedOptions } from '../resolve-options.js';

/** The checked URL to call back, or undefined when the request has none. `callerKey` must not appear in it. */
export async function checkCallbackTarget(options: ResolvedOptions, value: unknown, callerKey: string): Promise<string | undefined> {
  if (value === undefined) return undefined;
  const policy = options.callbacks;
  const check = checkCallbackUrl(value, policy, callerKey);
  if (!check.ok) throw GatewayError.invalidRequest(`callback_url ${check.reason}`, 'callback_url');
  if (!policy.allowLocal) {
    try {
      await resolvePublicAddress(check.url.hostname, { allowPrivate: policy.allowLocal });
    } catch (error) {
      const inside = error instanceof NonPublicAddressError && error.inside;
      throw GatewayError.invalidRequest(inside ? 'callback_url resolves to a non-public address' : 'callback_url names a host that does not resolve', 'callback_url');
    }
  }
  return check.url.href;
}
