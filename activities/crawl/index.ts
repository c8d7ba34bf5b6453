/** The crawl activities: each calls the crawl's work in core (core/crawls/work) with its context. */
import type { CrawlWork, FailCrawlInput, PublishInput, PublishResult } from '../../core/crawls/work';
import type { SliceInput, SliceResult } from '../../core/crawls/types';
import { asActivity } from '../failures';

export function crawlActivities(crawl: CrawlWork) {
  return {
    /** Fetches one slice of a crawl's pages and stores what it found (idempotent per slice). */
    async crawlSlice(input: SliceInput): Promise<SliceResult> {
      return asActivity((work) => crawl.slice(input, work));
    },
    /** Writes a crawl's progress, results and end (the workflow calls it one at a time per crawl). */
    async publishCrawl(input: PublishInput): Promise<PublishResult> {
      return crawl.publish(input);
    },
    /** Ends a crawl whose workflow gave up: its end recorded, the crawl settled, its end event told. */
    async failCrawl(input: FailCrawlInput): Promise<void> {
      return crawl.fail(input);
    },
  };
}
