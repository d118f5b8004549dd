// Attribute and instrument names (docs/observability.md). Local constants, not
// @opentelemetry/semantic-conventions: the GenAI conventions are experimental and renamed between
// releases, and a library must not pin its host to one release of them.
import type { RouteName } from '../types.js';

export const ATTR = {
  // GenAI client conventions (gen_ai.*)
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  requestModel: 'gen_ai.request.model',
  responseModel: 'gen_ai.response.model',
  outputType: 'gen_ai.output.type',
  choiceCount: 'gen_ai.request.choice.count',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  inputMessages: 'gen_ai.input.messages',
  // general conventions
  errorType: 'error.type',
  serverAddress: 'server.address',
  serverPort: 'server.port',
  httpMethod: 'http.request.method',
  httpRoute: 'http.route',
  httpStatus: 'http.response.status_code',
  // the gateway's own (image_gateway.*)
  route: 'image_gateway.route',
  outcome: 'image_gateway.outcome',
  attempt: 'image_gateway.attempt',
  idempotentReplay: 'image_gateway.idempotent_replay',
  taskStatus: 'image_gateway.task.status',
  limit: 'image_gateway.limit',
  storageOperation: 'image_gateway.storage.operation',
  // routing (docs/routing-and-health.md): the span names the fixed contract gives them
  selectedBy: 'gateway.upstream.selected_by',
  skipped: 'gateway.upstream.skipped',
  upstreamState: 'image_gateway.upstream.state',
  upstreamReason: 'image_gateway.upstream.reason',
} as const;

export const METRIC = {
  requestDuration: 'image_gateway.request.duration',
  upstreamDuration: 'gen_ai.client.operation.duration',
  images: 'image_gateway.images.generated',
  videoSeconds: 'image_gateway.video.seconds',
  taskTransitions: 'image_gateway.task.transitions',
  callbackDeliveries: 'image_gateway.callback.deliveries',
  limitRefusals: 'image_gateway.limit.refusals',
  storageBytes: 'image_gateway.storage.bytes',
  upstreamHealth: 'image_gateway.upstream.health_changes',
} as const;

/**
 * Seconds. The conventions' buckets stop at 81.92 s; image jobs take minutes and a video task's
 * create-to-result is longer still, so these go to 600 s.
 */
export const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 180, 300, 450, 600];

/** `gen_ai.operation.name` and `gen_ai.output.type` per route (custom values where the conventions have none). */
export const OPERATIONS: Readonly<Record<RouteName, { operation: string; output?: string }>> = {
  'images.generations': { operation: 'generate_content', output: 'image' },
  'images.edits': { operation: 'generate_content', output: 'image' },
  'images.native': { operation: 'generate_content', output: 'image' },
  'chat.completions': { operation: 'chat', output: 'text' },
  responses: { operation: 'chat', output: 'text' },
  'video.tasks': { operation: 'generate_content', output: 'video' },
  assets: { operation: 'create_asset' },
};

/** The operation of a task poll: reading a task's state, not generating. */
export const GET_TASK_OPERATION = 'get_task';

// SpanKind and SpanStatusCode values of the API (stable since 1.0)
export const SPAN_KIND = { internal: 0, server: 1, client: 2 } as const;
export const STATUS_ERROR = 2;
