// Removes secrets from text that may reach a client or a log: the exact keys the gateway knows for
// this call, and anything that looks like a bearer credential. Upstream messages and host errors
// are quoted in messages, and some of them quote the request they received.

const BEARER = /\b(Bearer|Basic)\s+[^\s"',;]+/gi;

export function redactSecrets(text: string, secrets: ReadonlyArray<string | undefined> = []): string {
  let redacted = text.replace(BEARER, '$1 [redacted]');
  for (const secret of secrets) {
    // short strings would blank ordinary words; real keys are long
    if (secret && secret.length >= 8) redacted = redacted.split(secret).join('[redacted]');
  }
  return redacted;
}
