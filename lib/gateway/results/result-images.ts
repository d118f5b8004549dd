// contract §2.4 b64_json: the gateway downloads each result image (bounded size and time, through the
// shared HTTP module), concurrently because result URLs are short-lived; write-image-response.ts
// encodes them on the way out. The upstream names the URLs, so they get the public-address rules
// (UpstreamHttp.download), and what comes back must be an image by its bytes before it is handed to
// the caller as one.
import { ERROR_CODES } from '../../errors/error-codes.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { CallContext } from '../../providers/call-context.js';
import type { ImageGenerationResponse } from '../../images/image-generation-response.js';
import { sniffImageType } from '../../images/sniff-image-type.js';

export interface DownloadPolicy {
  /** `allow.privateResultUrls`: result hosts on loopback/private networks may be fetched. */
  allowPrivate: boolean;
}

/**
 * The raw bytes of each entry that has a URL and no b64_json yet (undefined for the others). The
 * caller has already cut `response.data` to the images the request allowed: the upstream does not
 * decide how many downloads start.
 */
export async function downloadImages(response: ImageGenerationResponse, call: CallContext, provider: string, policy: DownloadPolicy): Promise<Array<Buffer | undefined>> {
  const { downloadBytes, downloadTimeoutMs } = call.limits;
  return Promise.all(
    response.data.map(async (item) => {
      if (item.b64_json !== '' || item.url === '') return undefined;
      let bytes: Buffer;
      try {
        bytes = await call.http.download(item.url, { provider, maxBytes: downloadBytes, timeoutMs: downloadTimeoutMs, signal: call.signal, allowPrivate: policy.allowPrivate });
      } catch (error) {
        if (!(error instanceof GatewayError)) throw error;
        // the download has its own deadline (limits.downloadTimeoutMs), not the upstream's timeoutMs
        const detail = error.status === 504 ? `the result host did not answer within ${downloadTimeoutMs} ms (the gateway's limits.downloadTimeoutMs).` : error.message.replace(/\.?$/, '.');
        throw downloadFailed(error.status === 504 ? 504 : 502, detail);
      }
      // the bytes go to the caller as an image: an HTML error page or anything else is not one
      if (!sniffImageType(bytes)) throw downloadFailed(502, `the ${provider} result URL did not answer with an image (PNG, JPEG, WebP, GIF, BMP, TIFF, HEIC or AVIF).`);
      return bytes;
    }),
  );
}

function downloadFailed(status: 502 | 504, detail: string): GatewayError {
  return new GatewayError({
    status,
    code: ERROR_CODES.imageDownloadFailed,
    message: `The image was generated but could not be downloaded for b64_json: ${detail} Ask for response_format 'url' instead.`,
  });
}
