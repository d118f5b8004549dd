// The multipart parser of POST /v1/images/edits: multer with in-memory storage (upload-chunks.ts: nothing touches
// the disk) and limits from the options, its errors turned into error objects that name the limit.
// The body must arrive within limits.bodyReadTimeoutMs, and is never decoded: busboy would parse
// compressed bytes as a form, and no SDK compresses uploads (so any Content-Encoding is a 415).
import type { RequestHandler } from 'express';
import multer from 'multer';
import { GatewayError } from '../../errors/gateway-error.js';
import type { GatewayLimits } from '../../options/request-limits.js';
import { startBodyDeadline, contentCodingOf, bodyAlreadyRead, bodyReadElsewhere } from './read-body.js';
import { isRepeatedHeader } from '../repeated-header.js';
import { uploadChunksStorage } from './upload-chunks.js';
import type { Logger } from '../../options/host-hooks.js';

export function createMultipartBody(limits: Readonly<GatewayLimits>, logger: Logger): RequestHandler {
  const maxFiles = limits.imagesPerRequest + 1; // the images and one mask
  const upload = multer({
    // each file kept as the chunks it came in (upload-chunks.ts), not copied into one Buffer
    storage: uploadChunksStorage(),
    // browsers and the SDKs send UTF-8 file names without a charset; busboy's default reads latin1
    defParamCharset: 'utf8',
    limits: { fileSize: limits.uploadFileBytes, files: maxFiles, fields: 64, parts: 64 + maxFiles, fieldNameSize: 200, fieldSize: 256 * 1024 },
  }).any();
  return function readMultipartBody(req, res, next) {
    // a form a host middleware read first cannot be read again: answered now, not after the read deadline
    if (bodyReadElsewhere(req)) {
      next(bodyAlreadyRead(logger, req.originalUrl.split('?')[0]!.slice(0, 200)));
      return;
    }
    if (isRepeatedHeader(req, 'content-type')) {
      next(GatewayError.invalidRequest('Send exactly one Content-Type header'));
      return;
    }
    if (!req.is('multipart/form-data')) {
      next(GatewayError.unsupportedMediaType(`Content-Type must be multipart/form-data with the image files, got '${String(req.headers['content-type'] ?? 'none').slice(0, 100)}'`));
      return;
    }
    try {
      contentCodingOf(req.headers, false);
    } catch (error) {
      next(error);
      return;
    }
    // multer's callback and the deadline race: whichever comes first answers
    let answered = false;
    const answer = (error?: GatewayError): void => {
      if (answered) return;
      answered = true;
      stopClock();
      next(error);
    };
    const stopClock = startBodyDeadline(req, res, limits.bodyReadTimeoutMs, answer);
    upload(req, res, (error?: unknown) => {
      answer(error === undefined || error === null ? undefined : toGatewayError(error, limits, maxFiles));
    });
  };
}

function toGatewayError(error: unknown, limits: Readonly<GatewayLimits>, maxFiles: number): GatewayError {
  if (error instanceof multer.MulterError) {
    const field = error.field ? `'${error.field.slice(0, 100)}'` : 'a field';
    switch (error.code) {
      case 'LIMIT_FILE_SIZE':
        return GatewayError.tooLarge(`The file in ${field} is larger than the ${limits.uploadFileBytes} byte limit per image`, error.field);
      case 'LIMIT_FILE_COUNT':
        return GatewayError.invalidRequest(`Too many files: at most ${limits.imagesPerRequest} images and one mask (${maxFiles} files)`);
      case 'LIMIT_FIELD_VALUE':
        return GatewayError.tooLarge(`The form field ${field} is too long`, error.field);
      case 'LIMIT_PART_COUNT':
      case 'LIMIT_FIELD_COUNT':
      case 'LIMIT_FIELD_KEY':
        return GatewayError.invalidRequest('The form has too many or too long fields');
      default:
        return GatewayError.invalidRequest(`The multipart form is invalid (${error.code})`);
    }
  }
  // busboy's own errors: a truncated or malformed body
  return GatewayError.invalidRequest('The multipart form is malformed or incomplete');
}
