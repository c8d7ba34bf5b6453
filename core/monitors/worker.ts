/**
 * Monitors' work in the worker process, built once by its composition root: a check's begin, pages
 * and end (check.ts, pages.ts), each a step an activity runs (activities/monitors).
 */
import type { Db } from 'mongodb';
import type { Accounts } from '../accounts';
import type { HtmlOutputs } from '../../engine';
import type { ChangeRecorder } from '../changes';
import type { RecipeCache } from '../extract/recipes';
import type { FetchPipeline } from '../fetch/pipeline';
import type { WorkContext } from '../jobs/work';
import { checkLifecycle, type BeginInput, type Begun, type CheckEnd } from './check';
import type { EventRef } from './events';
import { checkPages, type PagesOutcome } from './pages';
import { monitorStore } from './store';

export function createMonitorWork(deps: { db: Db; accounts: Accounts; pipeline: FetchPipeline; recorder: ChangeRecorder; outputs: HtmlOutputs; recipes: RecipeCache }) {
  const store = monitorStore(deps.db);
  const lifecycle = checkLifecycle(store);
  const pages = checkPages({ store, accounts: deps.accounts, pipeline: deps.pipeline, recorder: deps.recorder, outputs: deps.outputs, recipes: deps.recipes });
  return {
    begin: (input: BeginInput): Promise<Begun> => lifecycle.begin(input),
    pages: (checkId: string, work: WorkContext): Promise<PagesOutcome> => pages(checkId, work),
    end: (checkId: string, end: CheckEnd): Promise<{ status: string; events: EventRef[] }> => lifecycle.end(checkId, end),
  };
}

export type MonitorWork = ReturnType<typeof createMonitorWork>;
