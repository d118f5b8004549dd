// An image request run on the upstream's own task API instead of one call that waits (an
// Idempotency-Key request another instance could finish from the task id: docs/tenancy-and-billing.md
// "Retries"); the image pipeline's upstream calls (image-upstream-calls.ts) choose it.
import { clock } from '../../clock.js';
import type { ImageGenerationResponse } from '../../images/image-generation-response.js';
import type { ImageGenerationRequest } from '../../images/image-request.js';
import type { CallContext } from '../../providers/call-context.js';
import type { UpstreamImageTasks } from '../../providers/provider.js';
import { asStartedWork, awaitUpstreamImage } from '../../providers/registry.js';
import type { Upstream } from '../../types.js';
import type { GatewayDeps } from '../gateway-deps.js';
import type { ImageRequest } from './image-preparation.js';
import type { AttemptRecord } from '../ledger/vendor-work.js';
import type { Usage } from '../use-case.js';

/**
 * A request run on the upstream's own task API (an Idempotency-Key request: docs/tenancy-and-billing.md
 * "Retries"): submitted (paid from here), its id recorded in the key's lease before anything else, then
 * read until it ends within the upstream's deadline. Any error after the submit is one of work that
 * started. The attempt carries the task id, and settles as `made` with what the task made, or `failed`.
 */
export async function onUpstreamTask(
  deps: GatewayDeps,
  usage: Usage,
  record: AttemptRecord,
  request: ImageRequest,
  run: { call: CallContext; upstream: Upstream; tasks: UpstreamImageTasks; sent: ImageGenerationRequest },
): Promise<ImageGenerationResponse> {
  const { call, upstream, tasks, sent } = run;
  const startedAt = clock().now();
  const id = await tasks.submit(call, sent, upstream, upstream.model ?? sent.model);
  record.id = id;
  try {
    await usage.onUpstreamTask!({
      provider: upstream.provider,
      baseURL: upstream.baseURL,
      id,
      ...(sent.responseFormat === 'b64_json' ? { base64: true } : {}),
      ...(deps.options.storage ? { resultBase: request.from.resultBase } : {}),
    });
  } catch (error) {
    throw asStartedWork(error);
  }
  const state = await awaitUpstreamImage(call, upstream, tasks, id, { startedAt, longestReadMs: deps.options.callbacks.pollIntervalsMs.image.at(-1)! });
  if (state.status === 'failed') {
    // the vendors bill what their task made: a failed task made nothing; a task the vendor no longer
    // knows may have run, and is booked as possibly made (its outcome read from the error)
    if (!state.mayHaveRun) {
      record.outcome = 'failed';
      record.images = 0;
    }
    throw asStartedWork(state.error);
  }
  record.outcome = 'made';
  record.images = state.response.data.length;
  return state.response;
}
