import Koa from 'koa';
import { problem } from '../core/errors';
import type { ApiDeps } from './deps';
import { docsRoutes } from './docs/routes';
import { healthRoutes } from './health/routes';
import type { RequestState } from './http/context';
import { problemMiddleware } from './http/problem-middleware';
import { buildRouter, type Route } from './http/routes';

/** Every route of the service; each surface contributes its own list. */
export function allRoutes(deps: ApiDeps): Route[] {
  const routes: Route[] = [];
  routes.push(
    ...healthRoutes(deps),
    ...docsRoutes({ routes: () => routes, serverUrl: deps.config.publicUrl }),
  );
  return routes;
}

export function createApp(deps: ApiDeps, routes: Route[] = allRoutes(deps)): Koa<RequestState> {
  const app = new Koa<RequestState>({ proxy: false });
  app.silent = true;
  app.use(problemMiddleware({ log: deps.log, docsUrl: deps.config.docsUrl }));
  const router = buildRouter(routes, { bodyLimit: deps.config.bodyLimit });
  app.use(router.routes());
  app.use(
    router.allowedMethods({
      throw: true,
      methodNotAllowed: () => problem('method_not_allowed', 'This method is not allowed on this path.'),
      notImplemented: () => problem('method_not_allowed', 'This method is not supported.'),
    }),
  );
  return app;
}
