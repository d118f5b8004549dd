// A fake Volcengine Ark speaking upstreams §2.2-2.3 (and the §2.8 error envelope): created tasks
// answer `{ id: "cgt-…" }`; each GET moves a task one step along its status script
// (default queued -> running -> succeeded) and answers the SDK's task object for that status.
import type { ServerResponse } from 'node:http';
import { type FakeUpstream, type RecordedRequest, sendJson, startFakeUpstream } from './fake-upstream.js';

export interface FakeArk extends FakeUpstream {
  /** `${origin}/api/v3` */
  baseURL: string;
  /** Status scripts for the next created tasks, first in first out; default queued, running, succeeded. */
  scripts: string[][];
  tasks: Map<string, { body: Record<string, unknown>; statuses: string[]; gets: number }>;
  taskGets(): RecordedRequest[];
}

export function arkTaskObject(id: string, model: string, status: string): Record<string, unknown> {
  return {
    id,
    model,
    status,
    ...(status === 'succeeded' ? { content: { video_url: `https://ark-content.example/${id}.mp4?X-Tos-Expires=86400` } } : {}),
    error: status === 'failed' ? { code: 'OutputVideoSensitiveContentDetected', message: 'The output video may contain sensitive content. Request id: 0217' } : null,
    ...(status === 'succeeded' ? { usage: { completion_tokens: 108900, total_tokens: 108900 } } : {}),
    created_at: 1779348818,
    updated_at: 1779348874,
    seed: 78674,
    resolution: '720p',
    ratio: '16:9',
    duration: 5,
    framespersecond: 24,
    service_tier: 'default',
    execution_expires_after: 172800,
    generate_audio: true,
    draft: false,
    priority: 0,
  };
}

export async function startFakeArk(): Promise<FakeArk> {
  let created = 0;
  const tasks: FakeArk['tasks'] = new Map();
  const scripts: string[][] = [];
  const fake = await startFakeUpstream((request: RecordedRequest, res: ServerResponse) => {
    if (!request.headers.authorization?.startsWith('Bearer ')) {
      return sendJson(res, 401, { error: { code: 'AuthenticationError', message: 'missing key', param: '', type: 'Unauthorized' } });
    }
    if (request.method === 'POST' && request.path === '/api/v3/contents/generations/tasks') {
      const id = `cgt-20260917121233-${String(++created).padStart(5, '0')}`;
      tasks.set(id, { body: request.json as Record<string, unknown>, statuses: scripts.shift() ?? ['queued', 'running', 'succeeded'], gets: 0 });
      return sendJson(res, 200, { id });
    }
    const match = /^\/api\/v3\/contents\/generations\/tasks\/([^/?]+)$/.exec(request.path);
    if (request.method === 'GET' && match) {
      const task = tasks.get(decodeURIComponent(match[1]!));
      if (!task) return sendJson(res, 404, { error: { code: 'ResourceNotFound', message: 'task not found', param: 'id', type: 'NotFound' } });
      const status = task.statuses[Math.min(task.gets, task.statuses.length - 1)]!;
      task.gets += 1;
      return sendJson(res, 200, arkTaskObject(decodeURIComponent(match[1]!), String(task.body.model), status));
    }
    return sendJson(res, 404, { error: { code: 'NotFound', message: `no route ${request.path}`, param: '', type: 'NotFound' } });
  });
  return Object.assign(fake, {
    baseURL: `${fake.origin}/api/v3`,
    scripts,
    tasks,
    taskGets: () => fake.requests.filter((request) => request.method === 'GET'),
  });
}
