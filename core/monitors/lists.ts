/**
 * A monitor's URL lists (`monitor_lists`): the URLs it checks and those its last completed check found,
 * one document each, read by `_id` where a step needs them and nowhere else. A monitor of 50,000 URLs
 * holds megabytes of them, and FerretDB reads a whole document whatever the projection: kept in the
 * monitor's document they were read by every request about the monitor and every step of its checks.
 */
import type { ListDoc, MonitorDoc, MonitorStore, ShownMonitor } from './store';

export type ListName = 'urls' | 'last';
export const listId = (monitorId: string, name: ListName): string => `${monitorId}|${name}`;

export async function readList(store: MonitorStore, monitorId: string, name: ListName): Promise<string[]> {
  return (await store.lists.findOne({ _id: listId(monitorId, name) }))?.urls ?? [];
}

export async function writeList(store: MonitorStore, monitorId: string, name: ListName, urls: string[]): Promise<void> {
  const doc: ListDoc = { _id: listId(monitorId, name), monitor_id: monitorId, urls, updated_at: new Date() };
  await store.lists.replaceOne({ _id: doc._id }, doc, { upsert: true });
}

/** A deleted monitor's lists go with it at retention. */
export async function markListsDeleted(store: MonitorStore, monitorId: string): Promise<void> {
  await store.lists.updateMany({ _id: { $in: [listId(monitorId, 'urls'), listId(monitorId, 'last')] } }, { $set: { deleted: true, updated_at: new Date() } });
}

export async function removeLists(store: MonitorStore, monitorId: string): Promise<void> {
  await store.lists.deleteMany({ _id: { $in: [listId(monitorId, 'urls'), listId(monitorId, 'last')] } });
}

/** Monitors with their URLs, one read for all of them. */
export async function shownMonitors(store: MonitorStore, monitors: MonitorDoc[]): Promise<ShownMonitor[]> {
  const listed = monitors.filter((monitor) => monitor.crawl === null);
  const found = listed.length === 0 ? [] : await store.lists.find({ _id: { $in: listed.map((monitor) => listId(monitor._id, 'urls')) } }).toArray();
  const urls = new Map(found.map((doc) => [doc.monitor_id, doc.urls]));
  return monitors.map((monitor) => ({ ...monitor, urls: monitor.crawl === null ? (urls.get(monitor._id) ?? []) : null }));
}

export async function shownMonitor(store: MonitorStore, monitor: MonitorDoc): Promise<ShownMonitor> {
  return (await shownMonitors(store, [monitor]))[0] as ShownMonitor;
}
