import { Client, Connection } from '@temporalio/client';
import type { Config } from './config';

export interface TemporalHandle {
  connection: Connection;
  client: Client;
  /** Resolves when the frontend answers, rejects after `timeoutMs`. */
  ping(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * A lazy connection: the API starts (and reports "not ready") even while Temporal is down, and
 * reconnects by itself when it comes back.
 */
export function connectTemporal(config: Pick<Config, 'temporalAddress' | 'temporalNamespace'>): TemporalHandle {
  if (!config.temporalAddress) throw new Error('TEMPORAL_ADDRESS is not set and no local Temporal was started');
  const connection = Connection.lazy({ address: config.temporalAddress, connectTimeout: '5s' });
  const client = new Client({ connection, namespace: config.temporalNamespace });
  return {
    connection,
    client,
    async ping(timeoutMs = 2_000) {
      await connection.withDeadline(Date.now() + timeoutMs, () =>
        connection.workflowService.getSystemInfo({}),
      );
    },
    close: () => connection.close(),
  };
}

/** Search attributes our workflows set, so an operator filters runs in the Temporal Web UI. */
export const SEARCH_ATTRIBUTES = {
  FetchplaneAccountId: 'Keyword',
  FetchplaneStatus: 'Keyword',
  FetchplaneState: 'Keyword',
  FetchplaneJobId: 'Keyword',
} as const;
