/**
 * Names the API and the crawl workflow share: the workflow type and id, the stop signal and the
 * search attributes an operator filters crawls by in the Temporal Web UI. Pure (the workflow bundle
 * imports it).
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const CRAWL_WORKFLOW_TYPE = 'crawlWorkflow';
export const STOP_CRAWL_SIGNAL = 'stopCrawl';

export const crawlWorkflowId = (crawlId: string): string => `crawl-${crawlId}`;

export const ACCOUNT_ATTRIBUTE = defineSearchAttributeKey('FetchplaneAccountId', SearchAttributeType.KEYWORD);
export const STATUS_ATTRIBUTE = defineSearchAttributeKey('FetchplaneStatus', SearchAttributeType.KEYWORD);
/** The step a run is at when its status says little (a preparation: `discovering`, `verifying`, ...). */
export const STATE_ATTRIBUTE = defineSearchAttributeKey('FetchplaneState', SearchAttributeType.KEYWORD);
