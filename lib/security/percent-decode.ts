// Percent-decoding that never throws and sees through layered encoding, for secret checks on URLs
// (contract §5.5). decodeURIComponent throws on one malformed escape (`%E0`) and decodes one layer
// only, so a check built on it can be bypassed by either; this decodes every well-formed escape,
// turns undecodable bytes into U+FFFD, and repeats until nothing changes.
const ESCAPE_RUN = /(?:%[0-9A-Fa-f]{2})+/g;
const UTF8 = new TextDecoder('utf-8', { fatal: false });

/** One layer: each run of `%XX` escapes decoded as UTF-8, invalid sequences as U+FFFD. */
function decodePercentOnce(text: string): string {
  if (!text.includes('%')) return text;
  return text.replace(ESCAPE_RUN, (run) => {
    const bytes = new Uint8Array(run.length / 3);
    for (let index = 0; index < bytes.length; index += 1) bytes[index] = Number.parseInt(run.slice(index * 3 + 1, index * 3 + 3), 16);
    return UTF8.decode(bytes);
  });
}

/**
 * Decodes layer after layer until the text stops changing, at most `maxRounds` layers. `stable`
 * is false when the bound was reached first: no honest URL is encoded that deeply, so a caller
 * may refuse it rather than guess.
 */
export function decodePercentRepeatedly(text: string, maxRounds = 8): { text: string; stable: boolean } {
  let current = text;
  for (let round = 0; round < maxRounds; round += 1) {
    const next = decodePercentOnce(current);
    if (next === current) return { text: current, stable: true };
    current = next;
  }
  return { text: current, stable: decodePercentOnce(current) === current };
}
