// A bearer token from the host's own function (Azure's `token`, Vertex AI's `getAccessToken`:
// docs/providers/azure.md, docs/providers/gemini.md "Vertex AI"). The host owns its credentials; the gateway
// only waits for one, and for half the upstream's deadline at most: a function that hangs would
// otherwise hold the caller until the attempt's own deadline (a 504, with no fallback to the next
// upstream, since that deadline is armed with the same timeout before the token is asked).

/** How long a token is waited for within an attempt of `timeoutMs`: half of it, 30 s at most. */
export function tokenBudgetMs(timeoutMs: number): number {
  return Math.min(timeoutMs / 2, 30_000);
}

/**
 * The token the function gives within `tokenBudgetMs(timeoutMs)`, or undefined when it throws, answers late, or
 * answers something that is not a usable header value (not a string, empty, or with a line break).
 * The function's error is dropped here: it may quote the credentials it failed to get.
 */
export async function hostToken(source: () => unknown, timeoutMs: number): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const late = new Promise<undefined>((resolve) => {
      timer = setTimeout(resolve, tokenBudgetMs(timeoutMs), undefined);
    });
    const token: unknown = await Promise.race([Promise.resolve().then(source), late]);
    // a header value with a control character would be refused by the HTTP client (or split the header)
    return typeof token === 'string' && token !== '' && !hasControlCharacter(token) ? token : undefined;
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}

function hasControlCharacter(text: string): boolean {
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}
