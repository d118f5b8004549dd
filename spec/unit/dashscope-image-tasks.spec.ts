// DashScope's asynchronous task bodies (upstreams §1.5) as the gateway reads them: running while PENDING,
// RUNNING or SUSPENDED; succeeded with one image per result that has a URL (partial success bills only
// those); failed with DashScope's own code when FAILED, and a code that says so for CANCELED and UNKNOWN.
import { describe, expect, it } from 'vitest';
import { stateOf } from '../../lib/providers/dashscope/dashscope-image-tasks.js';

const task = (output: Record<string, unknown>) => ({ request_id: 'rq-1', output: { task_id: 't-1', ...output } });

describe('stateOf', () => {
  it.each(['PENDING', 'RUNNING', 'SUSPENDED'])('%s is running', (status) => {
    expect(stateOf(task({ task_status: status }))).toEqual({ status: 'running' });
  });

  it('SUCCEEDED keeps the results with a URL, in order', () => {
    const state = stateOf(task({ task_status: 'SUCCEEDED', results: [{ url: 'https://oss.example/1.png' }, { code: 'DataInspectionFailed', message: 'no' }, { url: 'https://oss.example/2.png' }] }));
    expect(state.status).toBe('succeeded');
    if (state.status !== 'succeeded') return;
    expect(state.response.data.map((item) => item.url)).toEqual(['https://oss.example/1.png', 'https://oss.example/2.png']);
    expect(state.response.extra.request_id).toBe('rq-1');
  });

  it.each([
    { name: 'FAILED with its code', output: { task_status: 'FAILED', code: 'DataInspectionFailed', message: 'Input data may contain inappropriate content.' }, code: 'content_policy_violation' },
    { name: 'SUCCEEDED without any image', output: { task_status: 'SUCCEEDED', results: [{ code: 'InternalError' }] }, code: 'upstream_no_image' },
    { name: 'UNKNOWN (expired or never given)', output: { task_status: 'UNKNOWN' }, code: 'upstream_error' },
    { name: 'CANCELED', output: { task_status: 'CANCELED' }, code: 'upstream_error' },
  ])('$name fails', ({ output, code }) => {
    const state = stateOf(task(output));
    expect(state.status).toBe('failed');
    if (state.status === 'failed') expect(state.error.code).toBe(code);
  });
});
