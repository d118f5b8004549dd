// Removes secrets from text that may reach a client or a log: the exact keys the gateway knows for
// this call, and anything that looks like a bearer credential. Upstream messages and host errors
// are quoted in messages, and some of them quote the request they received. It lives with the errors
// because GatewayError redacts its own messages, and the errors are the lowest leaf: every folder may
// import them, they import no other folder (docs/architecture.md "One direction of flow").

const BEARER = /\b(Bearer|Basic)\s+[^\s"',;]+/gi;
// what API keys look like when nobody said which they are: vendor prefixes (sk-…, ak_…), and any long
// opaque run (keys, tokens, base64 image bytes) of 40 or more key characters; request ids (hex) and
// UUIDs stay readable
const KEY_LIKE = /\b(?:sk|pk|rk|ak|api|key)[-_][A-Za-z0-9_-]{8,}/gi;
const LONG_OPAQUE = /[A-Za-z0-9+/_-]{40,}={0,2}/g;

export function redactSecrets(text: string, secrets: ReadonlyArray<string | undefined> = []): string {
  let redacted = text;
  // the exact keys first, so each is blanked whole before the patterns cut into it
  for (const secret of secrets) {
    // short strings would blank ordinary words; real keys are long
    if (secret && secret.length >= 8) redacted = redacted.split(secret).join('[redacted]');
  }
  // a long run of hex digits only is a request id or a hash (Ark's ids are 53), which callers need
  return redacted
    .replace(BEARER, '$1 [redacted]')
    .replace(KEY_LIKE, '[redacted]')
    .replace(LONG_OPAQUE, (run) => (/^[0-9a-f]+$/i.test(run) ? run : '[redacted]'));
}
