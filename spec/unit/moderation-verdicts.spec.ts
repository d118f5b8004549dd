// The verdict rules of the moderation policy (docs/content-safety.md): the categories a verdict flags
// once the policy's thresholds meet its scores, and the moderation API's answer read as a verdict.
import { describe, expect, it } from 'vitest';
import { judgeVerdict } from '../../lib/gateway/moderation/moderation.js';
import { verdictOf } from '../../lib/providers/openai/openai-moderation.js';

describe('judgeVerdict', () => {
  it.each([
    ['the checker’s own categories', { flagged: true, categories: ['violence'] }, undefined, { flagged: true, categories: ['violence'] }],
    ['a score at its threshold', { flagged: false, categories: [], scores: { hate: 0.5 } }, { hate: 0.5 }, { flagged: true, categories: ['hate'] }],
    ['a score under its threshold', { flagged: false, categories: [], scores: { hate: 0.49 } }, { hate: 0.5 }, { flagged: false, categories: [] }],
    ['a threshold without a score', { flagged: false, categories: [] }, { hate: 0.1 }, { flagged: false, categories: [] }],
    ['both, once each', { flagged: true, categories: ['hate'], scores: { hate: 0.9, sexual: 0.2 } }, { hate: 0.5, sexual: 0.1 }, { flagged: true, categories: ['hate', 'sexual'] }],
    ['names that are not strings dropped', { flagged: true, categories: ['violence', 3 as unknown as string] }, undefined, { flagged: true, categories: ['violence'] }],
    ['categories alone never flag', { flagged: false, categories: ['house-rules'] }, undefined, { flagged: false, categories: [] }],
    [
      'flagged by a score alone: only the categories the thresholds flagged',
      { flagged: false, categories: ['house-rules'], scores: { hate: 0.7 } },
      { hate: 0.5 },
      { flagged: true, categories: ['hate'] },
    ],
    ['flagged: true without categories', { flagged: true, categories: [] }, undefined, { flagged: true, categories: [] }],
  ])('%s', (_name, verdict, thresholds, expected) => {
    expect(judgeVerdict(verdict, thresholds)).toEqual(expected);
  });
});

describe('verdictOf (the moderation API answer)', () => {
  it.each([
    ['nothing flagged', { results: [{ flagged: false, categories: { hate: false }, category_scores: { hate: 0.01 } }] }, { flagged: false, categories: [], scores: { hate: 0.01 } }],
    [
      'the flagged categories and their scores',
      { results: [{ flagged: true, categories: { hate: false, violence: true }, category_scores: { hate: 0.01, violence: 0.93 } }] },
      { flagged: true, categories: ['violence'], scores: { hate: 0.01, violence: 0.93 } },
    ],
    [
      'several results merged: any flagged, the highest score',
      {
        results: [
          { flagged: false, categories: { violence: false }, category_scores: { violence: 0.2 } },
          { flagged: true, categories: { 'self-harm': true }, category_scores: { violence: 0.1, 'self-harm': 0.8 } },
        ],
      },
      { flagged: true, categories: ['self-harm'], scores: { violence: 0.2, 'self-harm': 0.8 } },
    ],
    ['a result without categories', { results: [{ flagged: true }] }, { flagged: true, categories: [], scores: {} }],
  ])('%s', (_name, body, expected) => {
    expect(verdictOf(body)).toEqual(expected);
  });

  it('an answer without results is a failed check', () => {
    expect(() => verdictOf({})).toThrow(/without results/);
  });
});
