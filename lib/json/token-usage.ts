// The token counts of an OpenAI-compatible answer (chat completions `usage`, Responses
// `response.usage`), for the usage event a host bills from (docs/tenancy-and-billing.md "Billing from
// usage events"): copied as the upstream reported them, never estimated. A streamed answer reports
// them in its last events (chat: a final chunk with `usage` when `stream_options.include_usage` is
// set; Responses: `response.completed`), read here as the events go by.

/** Tokens as the upstream reported them; `cached` and `reasoning` only where it said. */
export interface TokenUsage {
  input: number;
  output: number;
  cached?: number;
  reasoning?: number;
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

function detail(value: unknown, name: string): number | undefined {
  return typeof value === 'object' && value !== null ? count((value as Record<string, unknown>)[name]) : undefined;
}

/** The tokens of one `usage` object, chat's names or the Responses API's; undefined when it has neither. */
function tokensOfUsage(usage: unknown): TokenUsage | undefined {
  if (typeof usage !== 'object' || usage === null) return undefined;
  const fields = usage as Record<string, unknown>;
  const input = count(fields.prompt_tokens) ?? count(fields.input_tokens);
  const output = count(fields.completion_tokens) ?? count(fields.output_tokens);
  if (input === undefined && output === undefined) return undefined;
  const tokens: TokenUsage = { input: input ?? 0, output: output ?? 0 };
  const cached = detail(fields.prompt_tokens_details, 'cached_tokens') ?? detail(fields.input_tokens_details, 'cached_tokens');
  const reasoning = detail(fields.completion_tokens_details, 'reasoning_tokens') ?? detail(fields.output_tokens_details, 'reasoning_tokens');
  if (cached !== undefined) tokens.cached = cached;
  if (reasoning !== undefined) tokens.reasoning = reasoning;
  return tokens;
}

/** The tokens of a whole answer: its own `usage`, or (a Responses object in an event) its `response.usage`. */
export function tokensOfAnswer(answer: unknown): TokenUsage | undefined {
  if (typeof answer !== 'object' || answer === null) return undefined;
  const fields = answer as Record<string, unknown>;
  const response = fields.response;
  return tokensOfUsage(fields.usage) ?? (typeof response === 'object' && response !== null ? tokensOfUsage((response as Record<string, unknown>).usage) : undefined);
}

// an event larger than this is not a usage event worth keeping whole (they are a few hundred bytes)
const MAX_PENDING = 256 * 1024;
const USAGE = Buffer.from('"usage"');

/**
 * Reads the tokens of a server-sent-event stream as its chunks go by: only events that mention
 * `"usage"` are decoded and parsed, the last one that reports tokens wins. Most chunks cost one
 * byte search.
 */
export class StreamTokenReader {
  private pending = '';
  tokens?: TokenUsage;

  /** Sees one relayed chunk. */
  take(chunk: Buffer): void {
    if (this.pending === '' && !chunk.includes(USAGE)) {
      // a chunk that ends mid-event may hold the start of a usage event: keep its tail
      const end = chunk.lastIndexOf('\n\n');
      if (end >= 0 && end === chunk.length - 2) return;
      this.pending = chunk.toString('utf8', end >= 0 ? end + 2 : 0);
      return;
    }
    const text = this.pending + chunk.toString('utf8');
    const end = text.lastIndexOf('\n\n');
    if (end < 0) {
      this.pending = text.length <= MAX_PENDING ? text : '';
      return;
    }
    for (const event of text.slice(0, end).split('\n\n')) if (event.includes('"usage"')) this.read(event);
    const rest = text.slice(end + 2);
    this.pending = rest.length <= MAX_PENDING ? rest : '';
  }

  private read(event: string): void {
    const data = event
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).trimStart())
      .join('\n');
    try {
      this.tokens = tokensOfAnswer(JSON.parse(data)) ?? this.tokens;
    } catch {
      // not JSON (a [DONE], a cut event): nothing to read
    }
  }
}
