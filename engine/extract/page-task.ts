/**
 * Extract on one fetched page as an HTML task (engine/outputs/run.ts runs it inline when the page is
 * small, else on a worker thread): one parse gives the page's signature, the role it belongs to (by
 * structure, else by the fields a kind finds) and that role's fields, under the caller's parse caps.
 */
import { parseHtml } from '../outputs/dom';
import { taskModule, type TaskModule } from '../threads';
import { htmlTask } from '../outputs/tasks';
import type { DomainRecipe } from './recipe-data';
import { project, recognise, type Parsed } from './recipe';
import { toStandard } from './standard';

export interface ExtractPageArgs {
  url: string;
  roles: DomainRecipe['roles'];
  /** `extract=standard`: the canonical schema instead of the recipe's own field names. */
  standard: boolean;
  /** `extract_fields`. */
  fields?: string[];
}

export type ExtractPageValue =
  /** No role of the recipe recognises the page. */
  | { found: false }
  /** `missing`: required fields the page did not give; `absent`: asked fields it does not have. */
  | { found: true; role: string; parsed: Parsed; missing: string[]; absent: string[] };

export const tasks = {
  apply: htmlTask((html, args: ExtractPageArgs): ExtractPageValue => {
    const root = parseHtml(html);
    const found = recognise({ roles: args.roles }, args.url, root);
    if (!found) return { found: false };
    const { role, applied } = found;
    let parsed = args.standard ? (toStandard(role, applied) ?? {}) : applied.parsed;
    let absent: string[] = [];
    if (args.fields && args.fields.length > 0) ({ value: parsed, unknown: absent } = project(parsed, args.fields));
    return { found: true, role: role.role, parsed, missing: applied.missing, absent };
  }),
};

export type ExtractPageTasks = typeof tasks;

/** This module, named for the worker pool. */
export const EXTRACT_PAGE_TASKS: TaskModule<ExtractPageTasks> = taskModule<ExtractPageTasks>(__dirname, 'page-task');
