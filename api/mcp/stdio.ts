/**
 * `npm run mcp`: the MCP server over stdio for desktop agents, acting with `FETCHPLANE_API_KEY`.
 * stdout carries the protocol, so this process logs to stderr.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createAccounts } from '../../core/accounts';
import { processConfig } from '../../base/config';
import { openDatabase } from '../../base/db';
import { SERVICE_INDEXES } from '../../core/indexes';
import { onShutdown } from '../../base/lifecycle';
import { createLogger } from '../../base/log';
import { connectTemporal } from '../../base/temporal';
import { createFetching } from '../../core/fetch/service';
import { apiDeps } from '../deps';
import { createMcpServer } from './server';
import { mcpTools } from './tools';

async function main(): Promise<void> {
  const config = processConfig();
  const log = createLogger(config.logLevel, { component: 'mcp' }, (line) => process.stderr.write(line + '\n'));
  const key = config.fetchplaneApiKey;
  if (!key) throw new Error('FETCHPLANE_API_KEY is not set: the MCP server acts with that API key');
  const db = await openDatabase(config, log, { indexes: SERVICE_INDEXES });
  const accounts = createAccounts({ db: db.db, config, log });
  const check = await accounts.keys.check(key);
  if (!check.ok) throw new Error(`FETCHPLANE_API_KEY is not usable: the key is ${check.reason.replace('_', ' ')}`);
  accounts.start();
  const temporal = connectTemporal(config);
  const fetching = createFetching({ config, log, db: db.db });
  const deps = apiDeps({ config, log, db, temporal, accounts, fetching });
  const server = createMcpServer(mcpTools(deps), check.principal);
  const transport = new StdioServerTransport();
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopped ??= (async () => {
      await accounts.stop();
      await deps.services.close();
      await fetching.close();
      await temporal.close();
      await db.close();
    })());
  // The client closing stdin ends the session and the process.
  transport.onclose = () => void stop().then(() => process.exit(0));
  onShutdown(log, config.shutdownTimeoutMs, async () => {
    await server.close();
    await stop();
  });
  await server.connect(transport);
  log.info('mcp server on stdio', { account_id: check.principal.accountId });
}

main().catch((error: unknown) => {
  process.stderr.write(`mcp server failed to start: ${(error as Error).message}\n`);
  process.exit(1);
});
