/**
 * `npm start`: obtains what is missing, starts the whole stack with data under DATA_DIR, prints where
 * everything is, and stops it all in order on Ctrl-C or SIGTERM.
 */
import { processConfig, ConfigError } from '../core/config';
import { MissingPieceError } from './stack/binaries';
import { Stack } from './stack/stack';

const say = (line: string) => process.stdout.write(`[fetchplane] ${line}\n`);

async function main(): Promise<number> {
  const config = processConfig();
  const started = Date.now();
  const stack = new Stack({ config, echo: process.stdout, report: say });
  let stopping: Promise<void> | undefined;
  const stop = (signal: string) => {
    if (stopping) return;
    say(`${signal}: stopping`);
    stopping = stack.stop().then(() => {
      say('stopped');
      process.exit(0);
    });
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGHUP', () => stop('SIGHUP'));

  await stack.start();
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  say(`ready in ${seconds} s`);
  say(`API:             ${config.publicUrl}  (health: ${config.publicUrl}/readyz)`);
  if (stack.urls.temporalUi) say(`Temporal Web UI: ${stack.urls.temporalUi}`);
  say(`Data folder:     ${config.dataDir}  (logs in ${config.dataDir}/logs)`);
  const appUrl = config.appUrl ?? (config.appPort ? `http://localhost:${config.appPort}` : config.publicUrl);
  say('First API key:   npm run admin -- create-account   (prints an account and its key; --help lists more)');
  if (config.agentSignup) say(`                 or: curl -X POST -H 'Content-Type: application/json' -d '{}' ${appUrl}/api/agent/signup`);
  say('Press Ctrl-C to stop.');
  await new Promise(() => undefined);
  return 0;
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError || error instanceof MissingPieceError) say(error.message);
  else say(`failed to start: ${(error as Error).stack ?? String(error)}`);
  process.exit(1);
});
