// An upstream's wish to be left alone for a while (docs/routing-and-health.md "What counts"): the
// `Retry-After` and `retry-after-ms` headers as every provider reads them, strictly, so a value the
// gateway cannot read rests the upstream for the ordinary cooldown rather than for a guess.

/**
 * Seconds an upstream's `Retry-After` (delta-seconds or an HTTP date, RFC 9110 §10.2.3) or
 * `retry-after-ms` asks to wait; undefined when it names none; `'unreadable'` when it sent one that
 * cannot be read: a negative, fractional or non-numeric value, or a date that is not an HTTP date
 * (routing then rests the upstream for its ordinary cooldown, docs/routing-and-health.md "What counts").
 * A date already past is a wait of 0.
 */
export function retryAfterOf(headers: Readonly<Record<string, string | undefined>>): number | 'unreadable' | undefined {
  const value = headers['retry-after']?.trim();
  if (value) {
    if (/^\d+$/.test(value)) return Number(value);
    // only the HTTP date forms: Date.parse alone reads '-5' or '1.5' as dates of 2001
    const at = HTTP_DATE.test(value) ? Date.parse(value) : NaN;
    if (Number.isFinite(at)) return Math.max(0, (at - Date.now()) / 1000);
  }
  const ms = headers['retry-after-ms']?.trim();
  if (ms && /^\d+(\.\d+)?$/.test(ms)) return Number(ms) / 1000;
  return value || ms ? 'unreadable' : undefined;
}

// IMF-fixdate, the obsolete RFC 850 form and asctime (RFC 9110 §5.6.7)
const HTTP_DATE =
  /^(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT|[A-Z][a-z]+day, \d{2}-[A-Z][a-z]{2}-\d{2} \d{2}:\d{2}:\d{2} GMT|(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4})$/;
