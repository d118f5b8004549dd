// The image specs' shared upstream setup (image-generations, image-edits): the caller-facing image models and
// the DashScope models they map to, gpt-image-1 on the fake OpenAI upstream, and the operator key both
// fakes must receive (and no answer may echo). One place, so the two specs resolve models alike.
import type { Upstream } from '../../lib/index.js';
import type { FakeDashscope } from './fake-dashscope.js';
import type { FakeOpenAI } from './fake-openai.js';

export const UPSTREAM_KEY = 'sk-upstream-operator-secret-000';

/** Caller-facing model -> the DashScope model it is sent as. */
const MODEL_MAP: Readonly<Record<string, string>> = {
  'x-image-2.0': 'qwen-image-2.0',
  'x-image-max': 'qwen-image-max',
  'x-image-plus': 'qwen-image-plus',
  'x-image-edit': 'qwen-image-edit-plus',
};

/** The upstream of a mapped image model or gpt-image-1; null for any other model (the spec adds its own). */
export function imageUpstream(model: string, { dashscope, openai }: { dashscope: FakeDashscope; openai: FakeOpenAI }): Upstream | null {
  const mapped = MODEL_MAP[model];
  if (mapped) return { provider: 'dashscope', baseURL: dashscope.baseURL, apiKey: UPSTREAM_KEY, model: mapped };
  if (model === 'gpt-image-1') return { provider: 'openai', baseURL: openai.baseURL, apiKey: UPSTREAM_KEY, model: 'gpt-image-1-upstream' };
  return null;
}
