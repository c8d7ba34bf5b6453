import type { ApiDeps } from '../deps';
import type { Route } from '../http/routes';
import { agentRoutes } from './agent-routes';
import { claimRoutes } from './claim-routes';
import { planUsageRoutes } from './usage-routes';

/** Routes of {base_url}: plan usage. */
export function accountRoutes(deps: ApiDeps): Route[] {
  return planUsageRoutes(deps);
}

/** Routes of {app_url}: agent signup, the agent's account, the claim page. On PORT unless APP_PORT is set. */
export function appRoutes(deps: ApiDeps): Route[] {
  return [...agentRoutes(deps), ...claimRoutes(deps)];
}
