/** Every workflow the worker runs. Workflow code is deterministic: no Node built-ins, no I/O. */
export { selfCheckWorkflow } from './selfcheck';
export { crawlWorkflow, stopCrawlSignal } from './crawl';
export { webhookDeliveryWorkflow } from './webhook-delivery';
export { prepareDomainWorkflow } from './prepare-domain';
export { retentionWorkflow } from './retention';
export { reconcileWorkflow } from './reconcile';
export { batchRunWorkflow, batchExportWorkflow, batchScheduledFireWorkflow } from './batch-run';
export { monitorCheckWorkflow } from './monitor-check';
