// Volcengine OpenAPI request signing (upstreams §2.6): the HMAC-SHA256 scheme of the official SDKs
// (volc-sdk-golang base/sign.go, volc-sdk-python SignerV4). Written here because the vendor's Node
// package, @volcengine/openapi, pulls in axios 0.21. Pure: the caller passes the clock. The unit test
// checks it against an independent Python implementation (spec/fixtures/volcengine_sign_reference.py).
import { createHash, createHmac } from 'node:crypto';

export interface VolcengineSignInput {
  method: string;
  /** The Host header as sent, e.g. `ark.cn-beijing.volcengineapi.com` (a port is allowed). */
  host: string;
  /** The decoded path, e.g. `/`; each segment is percent-encoded here. `''` counts as `/`. */
  path: string;
  /** The decoded query parameters; send them with `volcengineQueryString` so both sides agree. */
  query: Record<string, string>;
  /**
   * Extra headers to send. `X-*` and `Content-Md5` ones are signed (e.g. `X-Security-Token` of STS
   * credentials), as the official SDKs do; others are sent unsigned, so a proxy may change them.
   * Host, Content-Type, X-Date, X-Content-Sha256 and Authorization belong to the signer.
   */
  headers?: Record<string, string>;
  body: string;
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  service: string;
  date: Date;
}

const ALGORITHM = 'HMAC-SHA256';
const CONTENT_TYPE = 'application/json';
const OWN_HEADERS = new Set(['host', 'content-type', 'x-date', 'x-content-sha256', 'authorization']);

/** The headers that make the request signed: Host, Content-Type, X-Date, X-Content-Sha256, Authorization (+ extras). */
export function signVolcengineRequest(input: VolcengineSignInput): Record<string, string> {
  const xDate = formatXDate(input.date);
  const day = xDate.slice(0, 8);
  const bodyHash = sha256Hex(input.body);

  const signed = new Map<string, string>([
    ['content-type', CONTENT_TYPE],
    ['host', canonicalHost(input.host)],
    ['x-content-sha256', bodyHash],
    ['x-date', xDate],
  ]);
  const extra: Record<string, string> = {};
  for (const [name, value] of Object.entries(input.headers ?? {})) {
    const lower = name.toLowerCase();
    // a second value for a signed header would make the signature cover something other than what is sent
    if (OWN_HEADERS.has(lower)) throw new TypeError(`signVolcengineRequest computes the ${name} header itself; do not pass it.`);
    extra[name] = value;
    if (lower.startsWith('x-') || lower === 'content-md5') signed.set(lower, value.trim());
  }
  const names = [...signed.keys()].sort();
  const signedHeaders = names.join(';');

  const canonicalRequest = [
    input.method.toUpperCase(),
    canonicalPath(input.path),
    volcengineQueryString(input.query),
    names.map((name) => `${name}:${signed.get(name)}\n`).join(''),
    signedHeaders,
    bodyHash,
  ].join('\n');
  const scope = `${day}/${input.region}/${input.service}/request`;
  const stringToSign = [ALGORITHM, xDate, scope, sha256Hex(canonicalRequest)].join('\n');

  // Volcengine's kDate is keyed with the raw secret (AWS SigV4 would use 'AWS4' + secret)
  let key: Buffer = Buffer.from(input.secretAccessKey, 'utf8');
  for (const part of [day, input.region, input.service, 'request']) key = hmac(key, part);
  const signature = hmac(key, stringToSign).toString('hex');

  return {
    ...extra,
    Host: input.host,
    'Content-Type': CONTENT_TYPE,
    'X-Date': xDate,
    'X-Content-Sha256': bodyHash,
    Authorization: `${ALGORITHM} Credential=${input.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`,
  };
}

/**
 * The canonical query string, which is also what to put on the wire: pairs sorted by the raw key's
 * UTF-8 bytes (as Go's url.Values.Encode in the official SDK), key and value percent-encoded.
 */
export function volcengineQueryString(query: Record<string, string>): string {
  return Object.entries(query)
    .sort(([a], [b]) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')))
    .map(([key, value]) => `${percentEncode(key)}=${percentEncode(value)}`)
    .join('&');
}

/** `yyyymmddThhmmssZ` in UTC; milliseconds are dropped. */
function formatXDate(date: Date): string {
  return date
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replace(/[-:]/g, '');
}

function canonicalPath(path: string): string {
  return path === '' ? '/' : path.split('/').map(percentEncode).join('/');
}

/** The SDKs sign the host without a default port (':80', ':443'); others stay. */
function canonicalHost(host: string): string {
  return host.replace(/:(?:80|443)$/, '');
}

/** RFC 3986: everything but A-Z a-z 0-9 - _ . ~ is %XX of its UTF-8 bytes. */
function percentEncode(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

function hmac(key: Buffer, text: string): Buffer {
  return createHmac('sha256', key).update(text, 'utf8').digest();
}
