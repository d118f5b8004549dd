// DashScope's error bodies (upstreams §1.4) as the gateway's errors: shared by the synchronous
// generation (dashscope.ts) and the asynchronous tasks (dashscope-image-tasks.ts).
import { GatewayError } from '../../errors/gateway-error.js';
import { classifyUpstreamCode } from '../../errors/status-policy.js';
import { isObject, stringOr } from '../../json/json-values.js';

/** upstreams §1.4: `{ request_id, code, message }` with a non-2xx status. */
export function normalizeDashscopeError(status: number, body: unknown, headerRequestId?: string): GatewayError {
  const code = isObject(body) ? stringOr(body.code) : undefined;
  return GatewayError.fromUpstream({
    provider: 'dashscope',
    status,
    upstreamCode: code,
    upstreamMessage: isObject(body) ? stringOr(body.message) : undefined,
    requestId: (isObject(body) && stringOr(body.request_id)) || headerRequestId,
    kind: classifyUpstreamCode(code) ?? (status === 200 ? 'server' : undefined),
  });
}
