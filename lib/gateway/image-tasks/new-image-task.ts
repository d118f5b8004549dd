// The record an accepted image task is created with (docs/image-tasks.md): who asked, the upstream it
// will run on, what was charged (settled at its terminal state), its deadline and lease, and where its
// callback goes. The store never holds image bytes, nor the caller's key (tasks/caller-snapshot.ts).
import { taskChargeOf } from '../tasks/task-charge.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { ImageTaskState, ImageTaskRecord } from '../../stores/tasks/task-store.js';
import type { Caller } from '../../types.js';
import type { GatewayDeps } from '../gateway-deps.js';
import { type PreparedImage, firstUpstreamOf, imagesAskedOf } from '../image-pipeline/image-pipeline.js';
import { leaseEnd } from '../leases/lease-terms.js';
import { snapshotCaller } from '../tasks/caller-snapshot.js';
import { newTaskId } from '../tasks/task-records.js';
import type { QuotaCharge } from '../tenancy/quotas.js';
import type { Cancellation, Usage, UseCaseRequest } from '../use-case.js';

/** The prefix of image task ids (`imgtask_…`, tasks/task-records.ts). */
export const IMAGE_TASK_PREFIX = 'imgtask';

/** What a submit knows when it creates the task. */
export interface NewImageTask {
  from: UseCaseRequest;
  model: string;
  route: ImageTaskState['route'];
  /** The request's bearer key: left out of the stored caller. */
  callerKey: string;
  ready: PreparedImage;
  callbackUrl: string | undefined;
  charge: QuotaCharge;
  usage: Usage;
}

/** The record of a task just accepted: `queued`, charged, its lease held by this process. */
export function newImageTaskRecord(deps: GatewayDeps, task: NewImageTask): ImageTaskRecord {
  const { options } = deps;
  const { from, ready, charge, usage, callbackUrl } = task;
  const now = Date.now();
  const images = imagesAskedOf(ready);
  const snapshot = snapshotCaller(from.caller, task.callerKey);
  const trace = options.telemetry.currentTaskTrace();
  // resolveUpstreams never answers an empty list (an unknown model is refused): a prepared call has a first upstream
  const first = firstUpstreamOf(ready);
  if (!first) throw GatewayError.internal();
  const charged = taskChargeOf(charge, { images });
  const state: ImageTaskState = {
    route: task.route,
    images,
    deadline: now + options.imageTasks.maxQueueMs,
    ...(usage.imageQuality !== undefined ? { quality: usage.imageQuality } : {}),
    ...(usage.sizeAsked !== undefined ? { size: usage.sizeAsked } : {}),
    ...(options.storage ? { durable: true } : {}),
    leaseUntil: leaseEnd(options.imageTasks.lease, now),
  };
  return {
    kind: 'image',
    id: newTaskId(IMAGE_TASK_PREFIX),
    owner: from.caller.id,
    ...(snapshot.ok ? { caller: snapshot.caller } : {}),
    model: task.model,
    upstream: { provider: first.provider, baseURL: first.baseURL, taskId: '', ...(first.model !== undefined && first.model !== task.model ? { model: first.model } : {}) },
    createdAt: now,
    status: 'queued',
    version: 1,
    ...(options.storage ? { resultBase: from.resultBase } : {}),
    ...(callbackUrl ? { callback: { url: callbackUrl, polls: 0, done: false } } : {}),
    ...(trace ? { trace } : {}),
    ...(charged ? { charge: charged } : {}),
    image: state,
  };
}

/** The request a task's run is made for: the submit's caller, the task's own cancellation, the result base seen at submit. */
export function runRequest(caller: Caller, controller: AbortController, resultBase: string): UseCaseRequest {
  const cancel: Cancellation = { clientGone: controller.signal, signal: controller.signal };
  return { caller, hostRequest: undefined, resultBase, cancel };
}
