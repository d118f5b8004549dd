// The delivery log of memoryTaskStore (docs/video-tasks-and-callbacks.md "Delivery log"): one map in
// creation order, copies in and out. It forgets a delivery once its retention has passed, and its
// oldest deliveries past `deliveries.maxEntries`, so the log is no memory hole.
import { clock } from '../../clock.js';
import { type DeliveryLogStore, type DeliveryRecord, newerFirst } from './delivery-records.js';

export function memoryDeliveryLog(): DeliveryLogStore {
  // a Map iterates in insertion order: the first entry is the oldest delivery
  const records = new Map<string, DeliveryRecord>();
  const copy = <T>(value: T): T => structuredClone(value);
  const live = (record: DeliveryRecord | undefined): DeliveryRecord | undefined => (record && record.expiresAt > clock().now() ? record : undefined);
  const prune = (maxEntries: number): void => {
    const now = clock().now();
    for (const [id, record] of records) {
      if (records.size <= maxEntries && record.expiresAt > now) break;
      records.delete(id);
    }
  };
  return {
    async createDelivery(record, room) {
      if (live(records.get(record.id))) return false;
      records.delete(record.id);
      records.set(record.id, copy(record));
      prune(room.maxEntries);
      return true;
    },
    async getDelivery(id) {
      const record = live(records.get(id));
      return record ? copy(record) : undefined;
    },
    async updateDelivery(id, update) {
      const record = live(records.get(id));
      if (!record || (update.from !== undefined && record.state !== update.from)) return undefined;
      if (update.state !== undefined) record.state = update.state;
      if (update.attempt !== undefined) record.attempts.push(copy(update.attempt));
      return copy(record);
    },
    async listDeliveries(query) {
      const matches: DeliveryRecord[] = [];
      for (const record of records.values()) {
        if (!live(record)) continue;
        if (query.owner !== undefined && record.owner !== query.owner) continue;
        if (query.taskId !== undefined && record.taskId !== query.taskId) continue;
        if (query.state !== undefined && record.state !== query.state) continue;
        if (query.since !== undefined && record.createdAt < query.since) continue;
        if (query.until !== undefined && record.createdAt >= query.until) continue;
        if (query.after !== undefined && newerFirst(query.after, record) >= 0) continue;
        matches.push(record);
      }
      matches.sort(newerFirst);
      return { deliveries: matches.slice(0, query.limit).map(copy), hasMore: matches.length > query.limit };
    },
  };
}
