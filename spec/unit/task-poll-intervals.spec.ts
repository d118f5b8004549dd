// The one polling schedule of every kind of task, `callbacks.pollIntervalsMs` (docs/configuration.md
// "callbacks"): one list per kind with its own default, the old image spelling refused with where it went,
// and the delays a follower takes from a schedule.
import { describe, expect, it } from 'vitest';
import { GatewayConfigError } from '../../lib/errors/config-error.js';
import { resolveOptions } from '../../lib/gateway/resolve-options.js';
import { pollDelayAfter, pollDelayOf } from '../../lib/gateway/tasks/task-keys.js';
import type { GatewayOptions } from '../../lib/options/gateway-options.js';

const verifyKey: GatewayOptions['verifyKey'] = () => null;
const resolveUpstream: GatewayOptions['resolveUpstream'] = () => null;

function configError(options: Record<string, unknown>): GatewayConfigError {
  try {
    resolveOptions({ verifyKey, resolveUpstream, ...options });
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayConfigError);
    return error as GatewayConfigError;
  }
  throw new Error('expected resolveOptions to throw');
}

describe('callbacks.pollIntervalsMs: one schedule per kind of task', () => {
  it('defaults: video late first, then gently; image every 5 s', () => {
    const { pollIntervalsMs } = resolveOptions({ verifyKey, resolveUpstream }).callbacks;
    expect(pollIntervalsMs).toStrictEqual({ video: [60_000, 45_000, 30_000, 20_000, 15_000], image: [5_000] });
    expect(Object.isFrozen(pollIntervalsMs)).toBe(true);
  });

  it('a kind given replaces its own list only; the other keeps its default', () => {
    const given = [2_000, 1_000];
    const { pollIntervalsMs } = resolveOptions({ verifyKey, resolveUpstream, callbacks: { pollIntervalsMs: { image: given } } }).callbacks;
    expect(pollIntervalsMs).toStrictEqual({ video: [60_000, 45_000, 30_000, 20_000, 15_000], image: [2_000, 1_000] });
    given[0] = 1;
    expect(pollIntervalsMs.image).toStrictEqual([2_000, 1_000]);
    expect(resolveOptions({ verifyKey, resolveUpstream, callbacks: { pollIntervalsMs: { video: [30] } } }).callbacks.pollIntervalsMs).toStrictEqual({ video: [30], image: [5_000] });
  });

  it.each<{ name: string; options: Record<string, unknown>; code: string; problem: string; fix: string }>([
    {
      name: 'the image poll in seconds under limits.imageTasks',
      options: { limits: { imageTasks: { pollSeconds: 1 } } },
      code: 'option_moved',
      problem: "Option 'limits.imageTasks.pollSeconds' is now callbacks.pollIntervalsMs.image (ms).",
      fix: 'callbacks: { pollIntervalsMs: { image: [5000] } }',
    },
    {
      name: 'one list for every kind',
      options: { callbacks: { pollIntervalsMs: [30_000, 15_000] } },
      code: 'callbacks_value',
      problem: 'callbacks.pollIntervalsMs is one list per kind of task',
      fix: 'pollIntervalsMs: { video: [60000, 30000, 15000], image: [5000] }',
    },
    {
      name: 'a kind the gateway does not have',
      options: { callbacks: { pollIntervalsMs: { batch: [1_000] } } },
      code: 'callbacks_unknown',
      problem: "Unknown callbacks.pollIntervalsMs kind 'batch'.",
      fix: 'use only: video, image.',
    },
    {
      name: 'an empty list',
      options: { callbacks: { pollIntervalsMs: { video: [] } } },
      code: 'callbacks_value',
      problem: 'callbacks.pollIntervalsMs.video must be a non-empty list of positive integers (ms).',
      fix: 'pollIntervalsMs: {',
    },
    {
      name: 'a delay that is not a positive whole number',
      options: { callbacks: { pollIntervalsMs: { image: [5_000, 0.5] } } },
      code: 'callbacks_value',
      problem: 'callbacks.pollIntervalsMs.image must be a non-empty list of positive integers (ms).',
      fix: 'pollIntervalsMs: {',
    },
    { name: 'not an object', options: { callbacks: { pollIntervalsMs: 5_000 } }, code: 'callbacks_value', problem: 'must be an object of lists by kind of task', fix: 'pollIntervalsMs: {' },
  ])('$name: $code', ({ options, code, problem, fix }) => {
    const error = configError(options);
    expect(error.code).toBe(code);
    const [first, shown] = error.message.split('\nFix: ');
    expect(first).toContain(problem);
    expect(shown).toContain(fix);
  });
});

describe('the delay before the next poll', () => {
  it.each([
    { polls: 0, delay: 60 },
    { polls: 1, delay: 45 },
    { polls: 4, delay: 15 },
    { polls: 40, delay: 15 },
  ])('counted polls: after $polls, $delay (the last delay repeats)', ({ polls, delay }) => {
    expect(pollDelayOf([60, 45, 30, 20, 15], polls)).toBe(delay);
  });

  it.each([
    { elapsed: 0, delay: 60 },
    { elapsed: 59, delay: 60 },
    { elapsed: 60, delay: 45 },
    { elapsed: 134, delay: 30 },
    { elapsed: 10_000, delay: 15 },
  ])('polls not counted: $elapsed ms in, $delay (the delays added up)', ({ elapsed, delay }) => {
    expect(pollDelayAfter([60, 45, 30, 20, 15], elapsed)).toBe(delay);
  });
});
