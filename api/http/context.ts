import type { ParameterizedContext } from 'koa';
import type { Logger } from '../../core/log';

export interface RequestState {
  requestId: string;
  log: Logger;
}

export type AppContext = ParameterizedContext<RequestState>;
