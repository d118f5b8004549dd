// spec §2.4 b64_json: the gateway downloads each result image (bounded size and time, through the
// shared HTTP module) and encodes it, concurrently, because result URLs are short-lived.
import { ERROR_CODES } from '../errors/error-codes.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { CallContext } from '../upstreams/call-context.js';
import type { ImageData } from '../upstreams/dashscope.js';

export async function fillBase64(data: ImageData[], call: CallContext, provider: string): Promise<void> {
  await Promise.all(
    data.map(async (item) => {
      if (item.b64_json !== '' || item.url === '') return;
      let bytes: Buffer;
      try {
        bytes = await call.http.download(item.url, {
          provider,
          maxBytes: call.limits.downloadBytes,
          timeoutMs: call.limits.downloadTimeoutMs,
          signal: call.signal,
        });
      } catch (error) {
        if (!(error instanceof GatewayError)) throw error;
        throw new GatewayError({
          status: error.status === 504 ? 504 : 502,
          code: ERROR_CODES.imageDownloadFailed,
          message: `The image was generated but could not be downloaded for b64_json: ${error.message.replace(/\.?$/, '.')} Ask for response_format 'url' instead.`,
        });
      }
      item.b64_json = bytes.toString('base64');
    }),
  );
}
