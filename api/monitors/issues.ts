/** How `/v1/monitors` bodies' schema failures read: Batch's `invalid_argument`, but a `crawl` body's as POST /v1/crawls answers them. */
import { crawlBodyIssues } from '../crawls/issues';
import type { IssueMapper } from '../http/routes';
import { batchIssues } from '../webhooks/routes';

const crawlIssues = crawlBodyIssues('crawl.');

export const monitorIssues: IssueMapper = (issue) => (issue.kind !== 'malformed_body' && issue.field.startsWith('crawl.') ? crawlIssues(issue) : batchIssues(issue));
