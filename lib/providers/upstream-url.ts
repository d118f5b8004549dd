// Joins an upstream's baseURL with an adapter path. Each vendor SDK's base carries its version prefix
// (each provider module names its own); a bare origin gets the prefix added, so both
// `https://dashscope-intl.aliyuncs.com` and `https://dashscope-intl.aliyuncs.com/api/v1` work.
// Only fixed adapter paths (and encoded ids) are appended: caller input never shapes the URL.

export function upstreamUrl(baseURL: string, versionPrefix: string, path: string): string {
  const base = baseURL.replace(/\/+$/, '');
  // after the scheme's '//', any further '/' means the base already names its path
  const hasPath = base.indexOf('/', base.indexOf('//') + 2) !== -1;
  return `${hasPath ? base : base + versionPrefix}${path}`;
}
