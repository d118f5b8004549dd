// Pure functions of the video-task path: Ark request/response translation (upstreams §2.2-2.3),
// terminal statuses (contract §3), callback event ids (contract §6.4) and stream error events (§4.3, §4.4).
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../lib/errors/gateway-error.js';
import { errorEvent } from '../../lib/express/answers/sse-relay.js';
import { eventIdFor } from '../../lib/gateway/tasks/task-keys.js';
import { readCreateTaskResponse, toCallerTask, translateCreateTaskRequest } from '../../lib/providers/ark/ark.js';
import { isTerminalStatus } from '../../lib/gateway/tasks/task-state-order.js';

describe('translateCreateTaskRequest', () => {
  it.each([
    ['renames the model and drops callback_url', { model: 'seedance', content: [], callback_url: 'https://h.example/cb' }, { model: 'doubao-seedance', content: [] }],
    [
      'keeps every other Ark field',
      { model: 'm', content: [], safety_identifier: 'u1', ratio: '16:9', vendor: { x: 1 } },
      { model: 'doubao-seedance', content: [], safety_identifier: 'u1', ratio: '16:9', vendor: { x: 1 } },
    ],
  ])('%s', (_name, body, expected) => {
    expect(translateCreateTaskRequest(body, 'doubao-seedance')).toEqual(expected);
  });
});

describe('readCreateTaskResponse', () => {
  it('reads the id', () => expect(readCreateTaskResponse({ id: 'cgt-1' })).toBe('cgt-1'));
  it.each([[{}], [{ id: '' }], [null], ['cgt-1']])('%j without an id is a 502', (body) => {
    const error = (() => {
      try {
        readCreateTaskResponse(body);
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).toJSON()).toEqual({
      error: { message: 'The ark upstream returned an unusable response: the created task has no id', type: 'upstream_error', code: 'upstream_bad_response', param: null },
    });
  });
});

describe('toCallerTask', () => {
  it("puts the gateway id and the caller model in place of Ark's, and drops the upstream draft id", () => {
    expect(toCallerTask({ id: 'cgt-9', model: 'doubao-x', status: 'running', draft_task_id: 'cgt-1', seed: 7 }, 'task_abc', 'seedance')).toEqual({
      id: 'task_abc',
      model: 'seedance',
      status: 'running',
      seed: 7,
    });
  });
  it('refuses a body without a status', () => {
    expect(() => toCallerTask({ id: 'cgt-9' }, 'task_abc', 'm')).toThrow('the task has no status');
  });
});

describe('isTerminalStatus (spec §3: the set is open)', () => {
  it.each([
    ['succeeded', true],
    ['failed', true],
    ['expired', true],
    ['cancelled', true],
    ['canceled', true],
    ['SUCCEEDED', true],
    ['queued', false],
    ['running', false],
    ['paused', false],
    [undefined, false],
  ])('%s -> %s', (status, terminal) => expect(isTerminalStatus(status)).toBe(terminal));
});

describe('eventIdFor (spec §6.4: the same for every attempt at one state)', () => {
  it('is stable for one task and state, and differs across states and tasks', () => {
    expect(eventIdFor('task_a', 'running')).toBe(eventIdFor('task_a', 'running'));
    expect(eventIdFor('task_a', 'running')).not.toBe(eventIdFor('task_a', 'succeeded'));
    expect(eventIdFor('task_a', 'running')).not.toBe(eventIdFor('task_b', 'running'));
    expect(eventIdFor('task_a', 'running')).toMatch(/^evt_[A-Za-z0-9_-]{27}$/);
  });
});

describe('errorEvent', () => {
  const error = GatewayError.upstreamTimeout('openai', 100);
  it('chat completions: a data line with an OpenAI error object', () => {
    expect(errorEvent(error, 'data', 0)).toBe(`data: ${JSON.stringify({ error: { message: error.message, type: 'upstream_error', param: null, code: 'upstream_timeout' } })}\n\n`);
  });
  it('responses: a named error event that continues the sequence', () => {
    expect(errorEvent(error, 'event', 7)).toBe(`event: error\ndata: ${JSON.stringify({ type: 'error', code: 'upstream_timeout', message: error.message, param: null, sequence_number: 7 })}\n\n`);
  });
});
