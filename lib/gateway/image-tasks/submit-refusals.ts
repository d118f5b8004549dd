// What an image task submit is refused for before anything is kept (docs/image-tasks.md): bytes asked
// of a task without result storage (the task store holds no image bytes), and a queue that is full,
// for the gateway or for one caller.
import { ERROR_CODES } from '../../errors/error-codes.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { ImageCall } from '../image-pipeline/image-pipeline.js';
import type { Admission } from './fair-queue.js';

/** `response_format: 'b64_json'` needs result storage for a task: the 400 naming the field, else nothing. */
export function checkKeepableFormat(call: ImageCall, storage: unknown): void {
  if (storage || !asksBase64(responseFormatOf(call))) return;
  throw GatewayError.invalidRequest(
    "response_format 'b64_json' needs result storage for an asynchronous task: the gateway keeps no image bytes with a task. Ask for 'url', or configure the `storage` option.",
    'response_format',
  );
}

/** `b64_json` asked, in a JSON field or in any of a form's repeated fields. */
function asksBase64(format: unknown): boolean {
  return Array.isArray(format) ? format.includes('b64_json') : format === 'b64_json';
}

function responseFormatOf(call: ImageCall): unknown {
  return call.input.kind === 'json' ? call.input.body.response_format : call.input.form.fields.response_format;
}

/** The answer to a submit the fair queue does not admit. */
export function queueRefusal(admission: Exclude<Admission, 'ok'>): GatewayError {
  return admission === 'caller-full'
    ? new GatewayError({
        status: 429,
        code: ERROR_CODES.taskQueueFull,
        message: 'You have the most image tasks waiting that one caller may have; submit more once some have started.',
        retryAfterSeconds: 10,
      })
    : new GatewayError({
        status: 503,
        code: ERROR_CODES.taskQueueFull,
        message: 'The gateway has the most image tasks waiting that it takes; retry shortly.',
        retryAfterSeconds: 10,
        type: 'server_error',
      });
}
