// A simulated Volcengine OpenAPI asset library (upstreams §2.6): `POST /?Action=CreateAsset&
// Version=2024-01-01`, AK/SK-signed with HMAC-SHA256, answering the `{ ResponseMetadata, Result }`
// envelope. It checks the signature the way the service does, from what is on the wire (its own code,
// not the gateway's signer), so a wrong signature from the gateway fails here as it would upstream.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BodyNotJson, BodyTooLarge, isObject, listenOnLoopback, parseJson, readBody, sendJson } from './simulation-http.js';

export interface SimulatedVolcengineOptions {
  accessKeyId: string;
  secretAccessKey: string;
  /** Default `cn-beijing` (§2.6). */
  region?: string;
}

export interface SimulatedVolcengine {
  /** The OpenAPI host as an origin, e.g. `http://127.0.0.1:53187` (the gateway's `baseURL` for route `assets`). */
  baseURL: string;
  /** Whether this library created the asset `id` (the simulated Ark refuses other `asset://` ids). */
  hasAsset(id: string): boolean;
  close(): Promise<void>;
}

const VERSION = '2024-01-01';
const SERVICE = 'ark';
// signatures older or newer than this are refused, as clock-skewed requests are by real OpenAPIs
const MAX_SKEW_MS = 15 * 60_000;
const MAX_BODY_BYTES = 1024 * 1024;
const ASSET_TYPES = new Set(['Image', 'Video', 'Audio']);
const KEPT_ASSETS = 1000;

class OpenApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export async function startSimulatedVolcengine(options: SimulatedVolcengineOptions): Promise<SimulatedVolcengine> {
  const region = options.region ?? 'cn-beijing';
  const assets = new Set<string>();

  const handle = async (req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://simulation');
    const action = url.searchParams.get('Action');
    if (req.method !== 'POST' || url.pathname !== '/') throw new OpenApiFailure(404, 'InvalidActionOrVersion', `No API at ${req.method ?? 'GET'} ${url.pathname.slice(0, 100)} in this simulation.`);
    if (action !== 'CreateAsset' || url.searchParams.get('Version') !== VERSION) {
      throw new OpenApiFailure(404, 'InvalidActionOrVersion', `Only Action=CreateAsset&Version=${VERSION} is simulated.`);
    }
    const body = await readBody(req, MAX_BODY_BYTES);
    verifySignature(req, url, body, options.accessKeyId, options.secretAccessKey, region);
    const input = parseJson(body);
    if (!isObject(input)) throw new OpenApiFailure(400, 'InvalidParameter', 'The request body must be a JSON object.');
    for (const field of ['GroupId', 'URL', 'AssetType'] as const) {
      if (typeof input[field] !== 'string' || input[field] === '') throw new OpenApiFailure(400, 'MissingParameter', `The parameter ${field} is required.`);
    }
    if (!ASSET_TYPES.has(input.AssetType as string)) throw new OpenApiFailure(400, 'InvalidParameter', 'AssetType must be Image, Video or Audio.');
    const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
    const id = `asset-${stamp}-${randomBytes(3).toString('hex').slice(0, 5)}`;
    assets.add(id);
    while (assets.size > KEPT_ASSETS) assets.delete(assets.values().next().value!);
    sendJson(res, 200, { ResponseMetadata: metadata(requestId, region), Result: { Id: id } });
  };

  const listening = await listenOnLoopback((req, res) => {
    const requestId = `${new Date().toISOString().replace(/\D/g, '').slice(0, 14)}${randomBytes(10).toString('hex').toUpperCase()}`;
    handle(req, res, requestId).catch((error: unknown) => {
      const failure =
        error instanceof OpenApiFailure
          ? error
          : error instanceof BodyTooLarge || error instanceof BodyNotJson
            ? new OpenApiFailure(400, 'InvalidParameter', error.message)
            : new OpenApiFailure(500, 'InternalError', 'The simulation failed.');
      if (failure.status === 500) console.error('[simulated-volcengine]', error);
      req.resume();
      sendJson(res, failure.status, { ResponseMetadata: { ...metadata(requestId, region), Error: { Code: failure.code, Message: failure.message } } });
    });
  });
  return { baseURL: listening.origin, hasAsset: (id) => assets.has(id), close: () => listening.close() };
}

function metadata(requestId: string, region: string): Record<string, string> {
  return { RequestId: requestId, Action: 'CreateAsset', Version: VERSION, Service: SERVICE, Region: region };
}

/**
 * §2.6: `Authorization: HMAC-SHA256 Credential=<AK>/<yyyymmdd>/<region>/ark/request,
 * SignedHeaders=<names>, Signature=<hex>`; kDate = HMAC(SK, date) -> region -> service -> 'request'.
 */
function verifySignature(req: IncomingMessage, url: URL, body: Buffer, accessKeyId: string, secretAccessKey: string, region: string): void {
  const auth = /^HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/.exec(req.headers.authorization ?? '');
  if (!auth) throw new OpenApiFailure(401, 'MissingAuthenticationToken', 'The request is not signed: send an HMAC-SHA256 Authorization header.');
  const [, ak, day, signedRegion, service, signedHeaderList, signature] = auth as unknown as [string, string, string, string, string, string, string];
  if (ak !== accessKeyId) throw new OpenApiFailure(401, 'InvalidAccessKey', 'The access key id does not exist.');
  if (signedRegion !== region || service !== SERVICE) throw new OpenApiFailure(401, 'SignatureDoesNotMatch', `The credential scope must be <date>/${region}/${SERVICE}/request.`);
  const xDate = String(req.headers['x-date'] ?? '');
  const when = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(xDate);
  if (!when || xDate.slice(0, 8) !== day) throw new OpenApiFailure(401, 'InvalidTimestamp', 'X-Date is missing or does not match the credential date.');
  const time = Date.UTC(+when[1]!, +when[2]! - 1, +when[3]!, +when[4]!, +when[5]!, +when[6]!);
  if (Math.abs(Date.now() - time) > MAX_SKEW_MS) throw new OpenApiFailure(401, 'InvalidTimestamp', 'X-Date is more than 15 minutes away from the server time.');
  const bodyHash = createHash('sha256').update(body).digest('hex');
  if (req.headers['x-content-sha256'] !== bodyHash) throw new OpenApiFailure(401, 'SignatureDoesNotMatch', 'X-Content-Sha256 is not the SHA-256 of the body.');
  const names = signedHeaderList.split(';');
  for (const required of ['content-type', 'host', 'x-content-sha256', 'x-date']) {
    if (!names.includes(required)) throw new OpenApiFailure(401, 'SignatureDoesNotMatch', `SignedHeaders must include ${required}.`);
  }
  const encode = (text: string) => encodeURIComponent(text).replace(/[!'()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);
  const query = [...url.searchParams.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, value]) => `${encode(key)}=${encode(value)}`)
    .join('&');
  const canonicalRequest = ['POST', url.pathname, query, names.map((name) => `${name}:${String(req.headers[name] ?? '').trim()}\n`).join(''), signedHeaderList, bodyHash].join('\n');
  const scope = `${day}/${region}/${SERVICE}/request`;
  const stringToSign = ['HMAC-SHA256', xDate, scope, createHash('sha256').update(canonicalRequest).digest('hex')].join('\n');
  let key: Buffer = Buffer.from(secretAccessKey, 'utf8');
  for (const part of [day, region, SERVICE, 'request']) key = createHmac('sha256', key).update(part).digest();
  const expected = createHmac('sha256', key).update(stringToSign).digest();
  if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) {
    throw new OpenApiFailure(401, 'SignatureDoesNotMatch', 'The request signature does not match the one computed with the secret access key.');
  }
}
