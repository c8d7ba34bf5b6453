import type { SweepReport } from '../core/retention';
import type { ActivityDeps } from './deps';
import { workContext } from './failures';

export function retentionActivities(deps: ActivityDeps) {
  return {
    /** One retention sweep (core/retention.ts), heartbeating as it goes so a killed worker's sweep restarts. */
    async retentionSweep(): Promise<SweepReport> {
      const work = workContext();
      const report = await deps.sweep(() => work.heartbeat());
      deps.log.info('retention sweep', { removed: report.removed });
      return report;
    },
  };
}
