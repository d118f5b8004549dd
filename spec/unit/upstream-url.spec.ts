// upstreamUrl and openAICompatiblePrefix: joining an upstream baseURL with an adapter path (docs/architecture.md Upstream.baseURL).
import { describe, expect, it } from 'vitest';
import { DASHSCOPE_IMAGE_PATH } from '../../lib/providers/dashscope/dashscope.js';
import { openAICompatiblePrefix } from '../../lib/providers/registry.js';
import { upstreamUrl } from '../../lib/providers/call-context.js';

describe('upstreamUrl', () => {
  it.each<{ name: string; baseURL: string; prefix: string; path: string; expected: string }>([
    {
      name: 'bare DashScope origin gets /api/v1',
      baseURL: 'https://dashscope-intl.aliyuncs.com',
      prefix: '/api/v1',
      path: DASHSCOPE_IMAGE_PATH,
      expected: 'https://dashscope-intl.aliyuncs.com/api/v1/services/aigc/multimodal-generation/generation',
    },
    {
      name: 'bare origin with a trailing slash',
      baseURL: 'https://dashscope-intl.aliyuncs.com/',
      prefix: '/api/v1',
      path: DASHSCOPE_IMAGE_PATH,
      expected: 'https://dashscope-intl.aliyuncs.com/api/v1/services/aigc/multimodal-generation/generation',
    },
    {
      name: 'SDK-style base with /api/v1 is kept',
      baseURL: 'https://dashscope.aliyuncs.com/api/v1',
      prefix: '/api/v1',
      path: DASHSCOPE_IMAGE_PATH,
      expected: 'https://dashscope.aliyuncs.com/api/v1/services/aigc/multimodal-generation/generation',
    },
    {
      name: 'base with /api/v1 and trailing slashes',
      baseURL: 'https://dashscope.aliyuncs.com/api/v1//',
      prefix: '/api/v1',
      path: DASHSCOPE_IMAGE_PATH,
      expected: 'https://dashscope.aliyuncs.com/api/v1/services/aigc/multimodal-generation/generation',
    },
    {
      name: 'bare origin with a port (a fake upstream on port 0)',
      baseURL: 'http://127.0.0.1:49152',
      prefix: '/api/v1',
      path: DASHSCOPE_IMAGE_PATH,
      expected: 'http://127.0.0.1:49152/api/v1/services/aigc/multimodal-generation/generation',
    },
    {
      name: 'Ark bare origin gets /api/v3',
      baseURL: 'https://ark.cn-beijing.volces.com',
      prefix: '/api/v3',
      path: '/contents/generations/tasks',
      expected: 'https://ark.cn-beijing.volces.com/api/v3/contents/generations/tasks',
    },
    {
      name: 'Ark base with /api/v3 is kept',
      baseURL: 'https://ark.cn-beijing.volces.com/api/v3/',
      prefix: '/api/v3',
      path: '/contents/generations/tasks',
      expected: 'https://ark.cn-beijing.volces.com/api/v3/contents/generations/tasks',
    },
    {
      name: 'OpenAI base with /v1 is kept',
      baseURL: 'https://api.openai.com/v1',
      prefix: '/v1',
      path: '/images/generations',
      expected: 'https://api.openai.com/v1/images/generations',
    },
    {
      name: 'DashScope compatible-mode base is kept',
      baseURL: 'https://dashscope.aliyuncs.com/compatible-mode/v1',
      prefix: openAICompatiblePrefix('dashscope'),
      path: '/chat/completions',
      expected: 'https://dashscope.aliyuncs.com/compatible-mode/v1/chat/completions',
    },
    {
      name: 'DashScope bare origin for chat gets /compatible-mode/v1',
      baseURL: 'https://dashscope-intl.aliyuncs.com',
      prefix: openAICompatiblePrefix('dashscope'),
      path: '/chat/completions',
      expected: 'https://dashscope-intl.aliyuncs.com/compatible-mode/v1/chat/completions',
    },
  ])('$name', ({ baseURL, prefix, path, expected }) => {
    expect(upstreamUrl(baseURL, prefix, path)).toBe(expected);
  });
});

describe('openAICompatiblePrefix', () => {
  it.each([
    { provider: 'openai', expected: '/v1' },
    { provider: 'ark', expected: '/api/v3' },
    { provider: 'dashscope', expected: '/compatible-mode/v1' },
    { provider: 'something-else', expected: '/v1' },
  ])('$provider -> $expected', ({ provider, expected }) => {
    expect(openAICompatiblePrefix(provider)).toBe(expected);
  });
});
