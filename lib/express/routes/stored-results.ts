// GET /v1/results/<tenant>/<name>: the objects of a store that the router serves itself
// (localResultStorage; docs/architecture.md "Long-lived work"). No bearer key: the signed URL is the credential, as an S3
// presigned URL is, so an <img> tag can show it. Every refusal is the contract §2.5 error object;
// a bad signature, a malformed or traversing path and a missing file all read as 404 (nothing
// tells whether a key exists), an honestly signed but expired URL is 403.
import type { Request, RequestHandler, Response } from 'express';
import { pipeline } from 'node:stream/promises';
import { GatewayError } from '../../errors/gateway-error.js';
import type { ResultStorage, ServedResult } from '../../stores/results/result-storage.js';
import type { Logger } from '../../options/host-hooks.js';
import { routeHandler } from '../route-handler.js';

export const STORED_RESULTS_PATH = '/v1/results/:tenant/:name';

export function storedResultsHandler(store: Required<Pick<ResultStorage, 'read'>>, logger: Logger): RequestHandler {
  return routeHandler('storedResult', async ({ req, res }) => {
    const { tenant, name } = req.params as { tenant?: string; name?: string };
    const outcome = await store.read(`${tenant ?? ''}/${name ?? ''}`, req.query);
    if (!outcome.ok) {
      if (outcome.reason === 'expired') throw GatewayError.permissionDenied('This result URL has expired. Ask the gateway again (query the task, or keep the URL you were given fresher).');
      throw GatewayError.notFound('No such result.');
    }
    await sendStoredObject(req, res, outcome.result, logger);
  });
}

/**
 * Streams a stored object: one satisfiable byte range gets 206 (video seeking); anything else
 * (several ranges, a range past the end, another unit, a malformed header) gets the whole object, as
 * RFC 9110 §14.2 allows. Also the content of `GET /v1/videos/{id}/content` (openai-videos.ts).
 */
export async function sendStoredObject(req: Request, res: Response, result: ServedResult, logger: Logger): Promise<void> {
  const { contentType, size, slice } = result;
  let { body } = result;
  const ranges = slice && req.headers.range !== undefined ? req.range(size) : undefined;
  const range = Array.isArray(ranges) && ranges.type === 'bytes' && ranges.length === 1 ? ranges[0] : undefined;
  if (slice) res.setHeader('accept-ranges', 'bytes');
  if (range && slice) {
    body.destroy();
    body = slice(range.start, range.end);
    res.status(206);
    res.setHeader('content-range', `bytes ${range.start}-${range.end}/${size}`);
    res.setHeader('content-length', range.end - range.start + 1);
  } else {
    res.status(200);
    res.setHeader('content-length', size);
  }
  res.setHeader('content-type', contentType);
  // the key names immutable bytes; the signature's expiry bounds how long the URL works, not the cache
  res.setHeader('cache-control', 'private, max-age=3600, immutable');
  res.setHeader('x-content-type-options', 'nosniff');
  try {
    await pipeline(body, res);
  } catch (error) {
    // a client that leaves mid-file is not an error worth more than a line
    logger.info({ error: error instanceof Error ? error.message : String(error) }, 'stored result not fully sent');
  }
}
