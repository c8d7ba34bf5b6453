/**
 * The one rule for when a long workflow (a crawl, a Batch run) continues as new: when Temporal suggests
 * it (the history nears the server's limits) or when the history passes the configured bound, whichever
 * comes first. Both are read from the workflow's history, so replay decides the same way.
 */
import { workflowInfo } from '@temporalio/workflow';

export const shouldContinueAsNew = (historyLimit: number): boolean => {
  const info = workflowInfo();
  return info.continueAsNewSuggested || info.historyLength >= historyLimit;
};
