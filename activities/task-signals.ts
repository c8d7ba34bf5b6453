/** The per-task abort signals of an activity now live in base/ (Batch's slices run in core/); the crawl slice takes them from here. */
export { TaskSignals } from '../base/task-signals';
