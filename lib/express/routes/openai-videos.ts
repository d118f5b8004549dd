// OpenAI's videos routes (docs/openai-videos.md): POST /v1/videos (JSON, or the form the SDKs send with
// an `input_reference` file), GET /v1/videos/{id}, GET /v1/videos, DELETE /v1/videos/{id} and GET
// /v1/videos/{id}/content, over the video tasks of the one task service
// (gateway/video-tasks/openai-videos.ts). The SDK's remix, edits, extensions and characters have no
// meaning here: a 400 naming what is offered.
import type { Request, RequestHandler } from 'express';
import { GatewayError } from '../../errors/gateway-error.js';
import type { OpenAiVideos } from '../../gateway/video-tasks/openai-videos.js';
import { isQuoted } from '../../gateway/tenancy/quote.js';
import { sniffImageType } from '../../images/sniff-image-type.js';
import type { Logger } from '../../options/host-hooks.js';
import type { ResultStorage } from '../../stores/results/result-storage.js';
import { bearerKeyOf } from '../authenticate.js';
import { uploadedChunks } from '../body/upload-chunks.js';
import { UseCaseView } from '../request-base.js';
import { routeHandler } from '../route-handler.js';
import { sendJson } from '../answers/send-body.js';
import { sendQuote } from '../answers/send-quote.js';
import { sendStoredObject } from './stored-results.js';

export function createVideoHandler(videos: OpenAiVideos): RequestHandler {
  return routeHandler('createVideo', async (context) => {
    const fields = formFields(context.req);
    if (typeof fields.model === 'string') context.usage.model = fields.model;
    const outcome = await videos.create(new UseCaseView(context), fields, bearerKeyOf(context.req));
    context.recordUsage(outcome.usage);
    if (!outcome.ok) throw outcome.error;
    if (isQuoted(outcome.answer)) return sendQuote(context, outcome.answer.quote);
    sendJson(context, 200, outcome.answer);
  });
}

export function retrieveVideoHandler(videos: OpenAiVideos): RequestHandler {
  return routeHandler('retrieveVideo', async (context) => {
    const outcome = await videos.retrieve(new UseCaseView(context), String(context.req.params.id));
    context.recordUsage(outcome.usage);
    if (!outcome.ok) throw outcome.error;
    sendJson(context, 200, outcome.answer);
  });
}

export function listVideosHandler(videos: OpenAiVideos): RequestHandler {
  return routeHandler('listVideos', async (context) => {
    sendJson(context, 200, await videos.list(new UseCaseView(context), context.req.query));
  });
}

export function deleteVideoHandler(videos: OpenAiVideos): RequestHandler {
  return routeHandler('deleteVideo', async (context) => {
    sendJson(context, 200, await videos.remove(new UseCaseView(context), String(context.req.params.id)));
  });
}

/**
 * The finished video's bytes: streamed from the result storage when the router serves it (Range
 * honoured, as for stored results), else a redirect to the stored object's signed URL or, without
 * storage, the upstream's own URL (the client's HTTP stack follows it; the key is not sent along).
 */
export function videoContentHandler(videos: OpenAiVideos, store: ResultStorage | undefined, logger: Logger): RequestHandler {
  return routeHandler('videoContent', async (context) => {
    const { req, res } = context;
    const outcome = await videos.content(new UseCaseView(context), String(req.params.id), req.query.variant);
    context.recordUsage(outcome.usage);
    if (!outcome.ok) throw outcome.error;
    const content = outcome.answer;
    if (content.stored && store?.read) {
      const read = await store.read(content.key, Object.fromEntries(new URL(content.url, 'http://gateway.invalid').searchParams));
      if (!read.ok) throw GatewayError.notFound('The video is no longer stored.');
      return sendStoredObject(req, res, read.result, logger);
    }
    res.setHeader('cache-control', 'no-store');
    res.redirect(302, content.url);
  });
}

/** The SDK's video routes this gateway does not offer. */
export function unofferedVideoHandler(): RequestHandler {
  return routeHandler('unofferedVideo', async ({ req }) => {
    throw GatewayError.invalidRequest(
      `${req.method} ${req.path.slice(0, 100)} is not offered: this gateway's videos are create, retrieve, list, delete and content (remixes, edits, extensions and characters are not)`,
    );
  });
}

/**
 * The create's fields: the JSON body, or a form's fields with an `input_reference` file as a data:
 * URL of its image (the upstream fetches or reads it like any first frame). A file that is not an
 * image, or a file under another name, is a 400 naming it.
 */
function formFields(req: Request): Record<string, unknown> {
  const body = req.body as unknown;
  const fields: Record<string, unknown> = typeof body === 'object' && body !== null && !Array.isArray(body) ? { ...(body as Record<string, unknown>) } : {};
  if (!Array.isArray(req.files)) {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw GatewayError.invalidRequest('The body must be a JSON object or a multipart form');
    return fields;
  }
  for (const file of req.files) {
    if (file.fieldname !== 'input_reference' || fields.input_reference !== undefined) {
      throw GatewayError.invalidRequest(`Unexpected file '${file.fieldname.slice(0, 100)}': send one image as input_reference`, file.fieldname.slice(0, 100));
    }
    const bytes = Buffer.concat(uploadedChunks(file));
    const type = sniffImageType(bytes);
    if (!type) throw GatewayError.invalidRequest('input_reference must be a PNG, JPEG or WebP image', 'input_reference');
    fields.input_reference = `data:${type};base64,${bytes.toString('base64')}`;
  }
  return fields;
}
