// The DNS lookups of connections whose address is checked (origin-pools.ts): a pinned address
// (callbacks connect to the address they checked) and a public-only lookup (result downloads). Either
// is handed to undici's connector, which passes it to net/tls.connect: the check and the connect
// see the same answer, so a name cannot rebind to a private address in between.
import type { LookupFunction } from 'node:net';
import { type Resolver, resolvePublicAddress } from '../security/public-url.js';

/**
 * A lookup that resolves the name and answers only when every address is public (the check and the
 * connect see the same answer). A refused name fails the request like any other lookup error.
 */
export function publicLookup(resolve: Resolver | undefined): LookupFunction {
  return ((hostname: string, options: object, callback: (error: Error | null, address?: { address: string; family: 4 | 6 }[] | { address: string; family: 4 | 6 }) => void): void => {
    resolvePublicAddress(hostname, { allowPrivate: false }, resolve).then(
      (pinned) => callback(null, (options as { all?: boolean }).all ? [pinned] : pinned),
      (error: unknown) => callback(error instanceof Error ? error : new Error(String(error))),
    );
  }) as unknown as LookupFunction;
}

/**
 * A lookup that answers one fixed address, in the callback form net.connect accepts. It answers
 * on a later turn of the event loop, as a real DNS lookup does: answered synchronously, a connect()
 * the kernel refuses at once (ENETUNREACH, EPERM from a firewall, EADDRNOTAVAIL) fails inside
 * net.connect, before the connector has attached its 'error' listener (with node:http that error
 * killed the process; the spec for it stays, whatever the client).
 */
export function pinnedLookup(pinned: { address: string; family: 4 | 6 }): LookupFunction {
  return ((_hostname: string, options: object, callback: (error: Error | null, address: { address: string; family: 4 | 6 }[] | { address: string; family: 4 | 6 }) => void): void => {
    const answer = (options as { all?: boolean }).all ? [pinned] : pinned;
    setImmediate(() => callback(null, answer));
  }) as unknown as LookupFunction;
}
