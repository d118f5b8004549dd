// Whether the optional peer `bullmq` can be loaded, asked once when the router is created: the `redis`
// option runs the task scheduler on BullMQ, and a missing package must stop the app at startup with a
// fix, not at the first poll (docs/configuration.md "redis").
import { createRequire } from 'node:module';

/** True when `bullmq` resolves from this package, as the scheduler's own `import('bullmq')` will. */
export function bullmqInstalled(): boolean {
  try {
    // resolved, not loaded: the scheduler loads it when it starts
    createRequire(typeof __filename === 'string' ? __filename : import.meta.url).resolve('bullmq');
    return true;
  } catch {
    return false;
  }
}
