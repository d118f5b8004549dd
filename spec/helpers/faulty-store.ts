// A TaskStore wrapper whose write lands and whose answer is then lost, once: the "timeout after the
// command ran" between recording a terminal state and learning it was recorded (docs/architecture.md "Long-lived work: tasks, stores, schedulers, callbacks").
import type { TaskStore } from '../../lib/index.js';

export function failingOnceAfterTerminalWrite(inner: TaskStore): { store: TaskStore; failed: () => boolean } {
  let failed = false;
  const store: TaskStore = {
    ...inner,
    async updateTask(id, version, changes) {
      const updated = await inner.updateTask(id, version, changes);
      if (!failed && changes.callback?.done) {
        failed = true;
        throw new Error('store timeout after write');
      }
      return updated;
    },
  };
  return { store, failed: () => failed };
}
