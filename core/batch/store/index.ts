/** Batch's store: its records (records.ts), their ids (ids.ts) and the collections behind one object (store.ts). */
export * from './records';
export * from './ids';
export { BatchStore, BATCH_INDEXES, batchCollections } from './store';
