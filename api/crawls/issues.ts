/**
 * How a crawl body's schema failures read (out-of-range values 422, missing or mistyped ones 400): the
 * same on POST /v1/crawls and wherever a crawl body is nested (a monitor's `crawl`, under `prefix`).
 */
import { problem } from '../../base/errors';
import { CRAWL_WEBHOOK_EVENTS } from '../../core/crawls/types';
import { defaultIssues, type IssueMapper } from '../http/routes';

export const crawlBodyIssues =
  (prefix: string): IssueMapper =>
  (issue) => {
    const field = issue.kind === 'malformed_body' || !issue.field.startsWith(prefix) ? '' : issue.field.slice(prefix.length);
    // The start URL's own code, whatever rule of its schema it breaks (not a URL, not http, too long).
    if (issue.kind === 'invalid' && field === 'url' && !/must be string/.test(issue.message)) return problem('invalid_start_url', 'The start URL must be a public http or https URL of at most 2,048 characters.');
    if (issue.kind === 'invalid' && field.startsWith('discovery')) {
      return problem('invalid_parameter', '"discovery" takes ["links"]: crawls follow the links in each page; "pagination" is not offered to new crawls.', { status: 422 });
    }
    if (issue.kind === 'invalid' && field.startsWith('webhook.events') && /allowed values/.test(issue.message)) {
      return problem('invalid_parameter', `"${issue.field}" is not a crawl event: "webhook.events" takes ${CRAWL_WEBHOOK_EVENTS.join(', ')}.`, { status: 422, members: { parameter: `${prefix}webhook.events` } });
    }
    const error = defaultIssues(issue);
    if (issue.kind === 'invalid' && /must be [<>]=|allowed values|must NOT have (more|fewer)/.test(issue.message)) {
      return problem('invalid_parameter', error.detail, { status: 422 });
    }
    return error;
  };

/** POST /v1/crawls' own mapping. */
export const startIssues: IssueMapper = crawlBodyIssues('');
