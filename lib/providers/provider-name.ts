// The names a resolver may give as `Upstream.provider`: one per provider module, each the key of its line
// in the registry (registry.ts), which the compiler holds to this list. A file with no imports, so the
// public types (lib/types.ts) read it without depending on any provider.

/** The providers of the registry, by the name `Upstream.provider` gives. */
export type ProviderName = 'dashscope' | 'ark' | 'openai' | 'azure' | 'gemini' | 'vertex' | 'fal' | 'replicate';
