// The router's own JSON body parser (docs/architecture.md "Security boundaries": bounded in bytes, members, depth, time and copies).
// The body is read into one Buffer, its structure counted by a byte scan before JSON.parse runs (a
// body of millions of members is refused in milliseconds instead of blocking every tenant), then
// decoded once; the Buffer and the text are dropped as soon as the value exists. When the host
// already parsed the body (express.json() in front), that body is used as is. On the image route
// (`imageDataUrls`), a long image Data URL under an `image` key stays in the Buffer as a
// DataUrlText view rather than becoming a string (docs/architecture.md "Performance": memory per request ≤ 2x the body).
// A JSON body's `model` is read here too (contract §7): a non-empty string, otherwise exactly `model is required`.
import { randomBytes } from 'node:crypto';
import type { RequestHandler } from 'express';
import { GatewayError } from '../../errors/gateway-error.js';
import type { ResolvedOptions } from '../../gateway/resolve-options.js';
import { startBodyDeadline, contentCodingOf, readBody, bodyAlreadyRead, bodyReadElsewhere } from './read-body.js';
import { type LongString, scanJsonStructure } from '../../json/json-scan.js';
import { isObject } from '../../json/json-values.js';
import { checkImageDataUrlBytes } from '../../images/data-url.js';
import { DataUrlText } from '../../json/data-url-text.js';
import { fingerprintBytes } from './body-fingerprint.js';
import { findContext } from '../request-context.js';
import { isRepeatedHeader } from '../repeated-header.js';

const JSON_TYPES = ['application/json', '+json'];
/** JSON.parse takes any depth, but serializing it again (for the upstream) overflows the stack. */
const MAX_DEPTH = 64;

export interface JsonBodyOptions {
  /** Long image Data URLs under an `image` key become DataUrlText views of the body (the image route). */
  imageDataUrls?: boolean;
  /** Every body's bytes are hashed, not only those with an Idempotency-Key: kept work finds a retry by them (kept-work.ts). */
  fingerprintAll?: boolean;
}

export function createJsonBody(options: Pick<ResolvedOptions, 'limits' | 'compressedBodies' | 'logger'>, { imageDataUrls = false, fingerprintAll = false }: JsonBodyOptions = {}): RequestHandler {
  const { limits, compressedBodies } = options;
  return function readJsonBody(req, res, next) {
    // body-parser 1 (Express 4) flags `_body`; body-parser 2 (Express 5) leaves the stream read
    if (bodyReadElsewhere(req)) {
      // a host express.json() in front: its parsed value is used as it is; anything else it left
      // (text, raw bytes, nothing) cannot be read again (read-body.ts)
      if (!isParsedJson(req.body)) return next(bodyAlreadyRead(options.logger, req.originalUrl.split('?')[0]!.slice(0, 200)));
      if (nestingExceeds(req.body, MAX_DEPTH)) return next(GatewayError.invalidRequest(`The request body nests deeper than ${MAX_DEPTH} levels`));
      next();
      return;
    }
    const hasBody = req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0';
    if (!hasBody) return next(GatewayError.invalidRequest('The request body is empty: send a JSON object with Content-Type: application/json'));
    if (isRepeatedHeader(req, 'content-type')) return next(GatewayError.invalidRequest('Send exactly one Content-Type header'));
    // the exact type most clients send is accepted without parsing it (type-is, per request)
    if (req.headers['content-type'] !== 'application/json' && !req.is(JSON_TYPES)) {
      return next(GatewayError.unsupportedMediaType(`Content-Type must be application/json, got '${String(req.headers['content-type'] ?? 'none').slice(0, 100)}'`));
    }
    const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(req.headers['content-type'] ?? '')?.[1]?.toLowerCase();
    if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') return next(GatewayError.unsupportedMediaType('The request body must be UTF-8 JSON (charset=utf-8)'));
    let coding;
    try {
      coding = contentCodingOf(req.headers, compressedBodies !== false);
    } catch (error) {
      return next(error);
    }

    const read = readBody(req, coding, { maxBytes: limits.jsonBodyBytes, compressed: compressedBodies || undefined });
    const stopClock = startBodyDeadline(req, res, limits.bodyReadTimeoutMs, read.abort);
    read.body.then(
      (bytes) => {
        stopClock();
        // the request was answered while its body came (its chain ended on an error): nothing more runs
        const context = findContext(res);
        if (!context) return;
        fingerprintBytes(context, bytes, fingerprintAll);
        let body: unknown;
        try {
          body = parseJson(bytes, limits.jsonMembers, limits.jsonTextBytes, imageDataUrls);
        } catch (error) {
          return next(error);
        }
        req.body = body;
        (req as { _body?: boolean })._body = true;
        next();
      },
      (error: unknown) => {
        stopClock();
        next(error);
      },
    );
  };
}

/** Scan, decode, parse: each step refuses what the next one would choke on. */
function parseJson(bytes: Buffer, maxMembers: number, maxTextBytes: number, imageDataUrls: boolean): unknown {
  // a UTF-8 byte order mark is not JSON, but some clients send one
  const start = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  if (bytes.length === start) throw GatewayError.invalidRequest('The request body is empty: send a JSON object with Content-Type: application/json');
  const scan = scanJsonStructure(bytes, start, maxMembers, MAX_DEPTH, LONG_STRING_BYTES);
  if (!scan.ok && scan.reason === 'members') {
    throw GatewayError.tooLarge(`The request body has more than ${maxMembers} JSON members and array items, the limit`);
  }
  if (!scan.ok) throw GatewayError.invalidRequest(`The request body nests deeper than ${MAX_DEPTH} levels`);
  const long = scan.longStrings ?? [];
  let textBytes = bytes.length - start;
  for (const span of long) textBytes -= span.to - span.from;
  if (textBytes > maxTextBytes) {
    throw GatewayError.tooLarge(`The request body has ${textBytes} bytes of JSON outside long string values, more than the ${maxTextBytes} byte limit: send large content as Data URLs or public URLs`);
  }
  if (long.length === 0) {
    try {
      return JSON.parse(bytes.toString('utf8', start));
    } catch {
      throw GatewayError.invalidRequest('The request body is not valid JSON');
    }
  }
  return parseWithLongStrings(bytes, start, long, imageDataUrls);
}

/** Strings values this long (Data URLs) are decoded straight from the body's bytes. */
const LONG_STRING_BYTES = 64 * 1024;
// a raw control character is not allowed inside a JSON string (RFC 8259 §7)
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL_CHARACTER = /[\u0000-\u001f]/;
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/**
 * JSON.parse of the whole text would hold the Buffer, the text and the parsed copies of every
 * Data URL at once (3x the body). Instead the long escape-free string values are cut out of the text
 * (a placeholder with a per-request nonce stands in, which no caller can forge), the small rest is
 * parsed, and each long value is decoded once from the Buffer into its place: the Buffer plus the
 * strings, 2x the body at the peak, and the Buffer is dropped as soon as this returns. With
 * `imageDataUrls`, a valid image Data URL under an `image` key is not decoded at all: it becomes a
 * DataUrlText view of the Buffer (its `\/` escapes undone in place), so the peak is the Buffer alone.
 */
function parseWithLongStrings(bytes: Buffer, start: number, long: readonly LongString[], imageDataUrls: boolean): unknown {
  const marker = `\\u0000long-string:${randomBytes(12).toString('base64url')}:`;
  const parts: string[] = [];
  let at = start;
  long.forEach((span, index) => {
    parts.push(bytes.toString('utf8', at, span.from), `${marker}${index}`);
    at = span.to;
  });
  parts.push(bytes.toString('utf8', at));
  let skeleton: unknown;
  try {
    skeleton = JSON.parse(parts.join(''));
  } catch {
    throw GatewayError.invalidRequest('The request body is not valid JSON');
  }
  // the placeholder as JSON.parse returns it: the escape in the text becomes a real NUL
  const parsedMarker = `\0${marker.slice('\\u0000'.length)}`;
  const checkedText = (text: string): string => {
    if (CONTROL_CHARACTER.test(text)) throw GatewayError.invalidRequest('The request body is not valid JSON (a control character inside a string)');
    return text;
  };
  const valueOf = (placeholder: string, key?: string): string | DataUrlText | undefined => {
    if (!placeholder.startsWith(parsedMarker)) return undefined;
    const span = long[Number(placeholder.slice(parsedMarker.length))];
    if (!span) return undefined;
    if (imageDataUrls && key === 'image') {
      // the scan found each span once and they never overlap, so its bytes are this value's alone
      const to = span.slashEscapes ? unescapeSlashesInPlace(bytes, span.from, span.to) : span.to;
      // the size cap is the image request's to apply (with its message); here only the form
      const check = checkImageDataUrlBytes(bytes, span.from, to, Number.POSITIVE_INFINITY);
      // the header's parameters may hold any byte: only printable ASCII is kept as a view (the base64 is)
      if (check.ok && PRINTABLE_ASCII.test(bytes.toString('latin1', span.from, span.from + check.base64Start))) {
        return new DataUrlText(bytes.subarray(span.from, to), check.mime, check.bytes);
      }
      // anything else is a string as before: the image request answers it with the field's error
      return checkedText(bytes.toString('utf8', span.from, to));
    }
    return checkedText(span.slashEscapes ? withoutSlashEscapes(bytes, span.from, span.to) : bytes.toString('utf8', span.from, span.to));
  };
  if (typeof skeleton === 'string') return valueOf(skeleton) ?? skeleton;
  // iterative: the depth was bounded by the scan, but a stack is cheaper than recursion anyway
  const stack: unknown[] = [skeleton];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== 'object' || node === null) continue;
    const record = node as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const value = record[key];
      if (typeof value === 'string') {
        const restored = valueOf(value, Array.isArray(record) ? undefined : key);
        if (restored !== undefined) record[key] = restored;
      } else if (typeof value === 'object' && value !== null) stack.push(value);
    }
  }
  return skeleton;
}

/** A value a host's JSON parser made: an object or array, not text or bytes. */
function isParsedJson(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Buffer.isBuffer(value);
}

/** For bodies the host parsed: iterative, so the check itself cannot overflow. */
function nestingExceeds(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (typeof current !== 'object' || current === null) continue;
    if (depth > limit) return true;
    for (const child of Array.isArray(current) ? current : Object.values(current)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}

/** The parsed body as an object, or a 400 that says what the body must be. */
export function jsonObjectBody(body: unknown): Record<string, unknown> {
  if (!isObject(body)) throw GatewayError.invalidRequest('The request body must be a JSON object');
  return body;
}

/**
 * Undoes the `\/` escapes of [from, to) in place, each run moved left over its backslash (native
 * copies, found at memchr speed); returns the new end. The body's bytes are hashed for the
 * Idempotency-Key before parsing, and nothing else reads them after this.
 */
function unescapeSlashesInPlace(bytes: Buffer, from: number, to: number): number {
  let written = from;
  let read = from;
  while (read < to) {
    let backslash = bytes.indexOf(0x5c, read);
    if (backslash === -1 || backslash > to) backslash = to;
    if (written !== read) bytes.copyWithin(written, read, backslash);
    written += backslash - read;
    read = backslash + 1;
  }
  return written;
}

/**
 * The bytes [from, to) with every `\/` read as '/', decoded once. The scan made sure each backslash
 * there escapes a '/'; the runs between them are copied into one buffer (native copies, found at
 * memchr speed), which measured 2-3x faster than decoding and then replacing in the string.
 */
function withoutSlashEscapes(bytes: Buffer, from: number, to: number): string {
  const out = Buffer.allocUnsafe(to - from);
  let written = 0;
  let read = from;
  while (read < to) {
    let backslash = bytes.indexOf(0x5c, read);
    if (backslash === -1 || backslash > to) backslash = to;
    written += bytes.copy(out, written, read, backslash);
    // the '/' after the backslash starts the next run
    read = backslash + 1;
  }
  return out.toString('utf8', 0, written);
}

/** contract §7: a model name is a non-empty string, otherwise exactly `model is required`. */
export function requireModel(value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') throw GatewayError.modelRequired();
  return value;
}
