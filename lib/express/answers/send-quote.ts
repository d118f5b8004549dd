// The answer to a create sent with `Prefer: dry-run` (docs/tenancy-and-billing.md "Quotes before work"):
// 200 with the quote, `Preference-Applied: dry-run` (RFC 7240 §3: the server says which preference it
// honoured; a route that gives no quote does not say it), and `Cache-Control: no-store`, since the
// counters a quote reads move with every request.
import type { Quote } from '../../types.js';
import type { RequestContext } from '../request-context.js';
import { sendJson } from './send-body.js';

export function sendQuote(context: RequestContext, quote: Quote): void {
  const { res } = context;
  res.setHeader('Preference-Applied', 'dry-run');
  res.setHeader('Cache-Control', 'no-store');
  sendJson(context, 200, quote);
}
