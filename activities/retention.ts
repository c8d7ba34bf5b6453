import { Context } from '@temporalio/activity';
import { sweep, type SweepReport } from '../core/retention';
import type { ActivityDeps } from './deps';

export function retentionActivities(deps: ActivityDeps) {
  return {
    /** One retention sweep (core/retention.ts), heartbeating as it goes so a killed worker's sweep restarts. */
    async retentionSweep(): Promise<SweepReport> {
      const report = await sweep(deps.db, deps.config, new Date(), () => Context.current().heartbeat());
      deps.log.info('retention sweep', { removed: report.removed });
      return report;
    },
  };
}
