// The credential of an `Authorization: <scheme> <key>` header: what the gateway must never log, echo
// or let into a callback URL (contract §5). A leaf, so the inbound side and the use cases read it alike.

/** The key of an Authorization header value, '' when there is none. */
export function bearerKeyOfHeader(header: string | undefined): string {
  return /^\S+\s+(\S+)/.exec(header?.trim() ?? '')?.[1] ?? '';
}
