// GET /v1/results/<tenant>/<name>: the objects of a store that the router serves itself
// (localResultStorage, issue 12). No bearer key: the signed URL is the credential, as an S3
// presigned URL is, so an <img> tag can show it. Every refusal is the contract §2.5 error object;
// a bad signature, a malformed or traversing path and a missing file all read as 404 (nothing
// tells whether a key exists), an honestly signed but expired URL is 403.
import type { RequestHandler } from 'express';
import { pipeline } from 'node:stream/promises';
import { GatewayError } from '../../errors/gateway-error.js';
import type { ResultStorage } from '../../storage/result-storage.js';
import type { Logger } from '../../types.js';
import { asyncHandler } from '../async-handler.js';

export const STORED_RESULTS_PATH = '/v1/results/:tenant/:name';

export function storedResultsHandler(store: Required<Pick<ResultStorage, 'read'>>, logger: Logger): RequestHandler {
  return asyncHandler(async (req, res) => {
    const { tenant, name } = req.params as { tenant?: string; name?: string };
    const outcome = await store.read(`${tenant ?? ''}/${name ?? ''}`, req.query);
    if (!outcome.ok) {
      if (outcome.reason === 'expired') throw GatewayError.permissionDenied('This result URL has expired. Ask the gateway again (query the task, or keep the URL you were given fresher).');
      throw GatewayError.notFound('No such result.');
    }
    const { body, contentType, size } = outcome.result;
    res.status(200);
    res.setHeader('content-type', contentType);
    res.setHeader('content-length', size);
    // the key names immutable bytes; the signature's expiry bounds how long the URL works, not the cache
    res.setHeader('cache-control', 'private, max-age=3600, immutable');
    res.setHeader('x-content-type-options', 'nosniff');
    try {
      await pipeline(body, res);
    } catch (error) {
      // a client that leaves mid-file is not an error worth more than a line
      logger.info({ error: error instanceof Error ? error.message : String(error) }, 'stored result not fully sent');
    }
  });
}
