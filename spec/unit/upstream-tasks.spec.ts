// One provider capability for upstream tasks (docs/architecture.md "Providers and the registry"): every
// vendor's own task API is its `tasks`, a part per kind of work, each with the same verbs; the video
// route and the image tasks find their vendors through it alone.
import { describe, expect, it } from 'vitest';
import { PROVIDER_NAMES, providersWithTasks, upstreamTasksOf } from '../../lib/providers/registry.js';

describe('the tasks capability', () => {
  it('names the vendors that run video tasks and image tasks on their own task APIs, in registry order', () => {
    expect(providersWithTasks('video')).toEqual(['ark', 'gemini', 'vertex', 'fal', 'replicate']);
    expect(providersWithTasks('image')).toEqual(['dashscope', 'fal', 'replicate']);
  });

  it.each(PROVIDER_NAMES.map((provider) => ({ provider })))('$provider: each kind it runs submits, reads and gives the caller its view', ({ provider }) => {
    const video = upstreamTasksOf({ provider }, 'video');
    const image = upstreamTasksOf({ provider }, 'image');
    for (const api of [video, image]) {
      if (!api) continue;
      expect(typeof api.submit).toBe('function');
      expect(typeof api.read).toBe('function');
      if (api.cancel !== undefined) expect(typeof api.cancel).toBe('function');
    }
    if (video) expect(typeof video.view).toBe('function');
    if (image) {
      expect(typeof image.offers).toBe('function');
      expect(image.lifetimeMs).toBeGreaterThan(0);
    }
  });

  it('an upstream whose provider the registry does not know has no task API', () => {
    expect(upstreamTasksOf({ provider: 'nobody' as never }, 'video')).toBeUndefined();
  });
});
