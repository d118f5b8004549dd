// Joins an upstream's baseURL with an adapter path. Each vendor SDK's base carries its version prefix
// (dashscope `/api/v1`, ark `/api/v3`, openai `/v1`); a bare origin gets the prefix added, so both
// `https://dashscope-intl.aliyuncs.com` and `https://dashscope-intl.aliyuncs.com/api/v1` work.
// Only fixed adapter paths (and encoded ids) are appended: caller input never shapes the URL.

export function upstreamUrl(baseURL: string, versionPrefix: string, path: string): string {
  const base = baseURL.replace(/\/+$/, '');
  // after the scheme's '//', any further '/' means the base already names its path
  const hasPath = base.indexOf('/', base.indexOf('//') + 2) !== -1;
  return `${hasPath ? base : base + versionPrefix}${path}`;
}

/** The version prefix of a provider's OpenAI-compatible API, for bare-origin base URLs. */
export function openAICompatiblePrefix(provider: string): string {
  return provider === 'ark' ? '/api/v3' : provider === 'dashscope' ? '/compatible-mode/v1' : '/v1';
}

/**
 * The URL of an OpenAI-compatible endpoint for any provider: openai `{base}/v1`, ark `{base}/api/v3`,
 * and dashscope's compatible mode, also when the base is the native `/api/v1` one (design.md's
 * DashScope base), so one DashScope upstream serves images and chat alike.
 */
export function openAICompatibleUrl(provider: string, baseURL: string, path: string): string {
  const base = provider === 'dashscope' ? baseURL.replace(/\/+$/, '').replace(/\/api\/v1$/, '') : baseURL;
  return upstreamUrl(base, openAICompatiblePrefix(provider), path);
}
