// Removes what a spec left on the shared Redis: every key of the given patterns (a test's namespace
// and its queue's), so a run leaves nothing behind on a Redis that is used again.
import { Redis } from 'ioredis';

export async function removeRedisKeys(redisUrl: string, patterns: readonly string[]): Promise<void> {
  const cleaner = new Redis(redisUrl);
  try {
    for (const pattern of patterns) {
      const keys = await cleaner.keys(pattern);
      if (keys.length > 0) await cleaner.del(...keys);
    }
  } finally {
    cleaner.disconnect();
  }
}
