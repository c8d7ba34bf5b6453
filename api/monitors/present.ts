/** Monitors, checks and changes as `/v1/monitors` and the MCP tools show them. */
import type { CheckDoc, PageDoc, ShownMonitor } from '../../core/monitors/types';

const iso = (date: Date | null | undefined): string | null => (date ? date.toISOString() : null);

export function presentMonitor(monitor: ShownMonitor, nextCheckAt: Date | null): Record<string, unknown> {
  return {
    monitor_id: monitor._id,
    name: monitor.name,
    status: monitor.status,
    urls: monitor.urls,
    crawl: monitor.crawl,
    schedule: monitor.schedule,
    ...(monitor.outputs.css_extractor ? { css_extractor: monitor.outputs.css_extractor } : {}),
    ...(monitor.outputs.extract ? { extract: monitor.outputs.extract } : {}),
    ...(monitor.outputs.main_content ? { main_content: true } : {}),
    webhook: monitor.webhook,
    next_check_at: iso(nextCheckAt),
    baseline_at: iso(monitor.baseline_at),
    last_check_id: monitor.last_check_id,
    check_count: monitor.check_count,
    created_at: monitor.created_at.toISOString(),
    updated_at: monitor.updated_at.toISOString(),
  };
}

export function presentCheck(check: CheckDoc): Record<string, unknown> {
  return {
    check_id: check._id,
    status: check.status,
    trigger: check.trigger,
    baseline: check.baseline,
    scheduled_at: iso(check.scheduled_at),
    started_at: check.started_at.toISOString(),
    ended_at: iso(check.ended_at),
    pages_checked: check.pages_checked,
    new: check.new,
    changed: check.changed,
    removed: check.removed,
    same: check.same,
    failed: check.failed,
    credits: check.credits,
    ...(check.reason ? { failure_reason: check.reason, failure_detail: check.detail ?? '' } : {}),
  };
}

export function presentChange(page: PageDoc): Record<string, unknown> {
  return {
    url: page.url,
    change_status: page.change,
    diff: page.diff,
    fetched_at: page.fetched_at.toISOString(),
    previous_fetched_at: iso(page.previous_fetched_at),
    ...(page.error ? { error: page.error } : {}),
  };
}
