/**
 * `npm start`: obtains what is missing, starts the whole stack with data under DATA_DIR, prints where
 * everything is, restarts a component that dies (the stack's supervisor), and stops it all in order on
 * Ctrl-C, SIGTERM or SIGHUP, or when the process that started it goes away. A component that keeps
 * failing stops everything: the launcher exits with code 1 after printing that component's last lines.
 */
import { processConfig, ConfigError } from '../base/config';
import { MissingPieceError } from './stack/binaries';
import { ComponentStartError, Stack, type ComponentName } from './stack/stack';

const say = (line: string) => process.stdout.write(`[fetchplane] ${line}\n`);
const indented = (lines: string[]) => lines.map((line) => `    ${line}`).join('\n');

/** How often the launcher looks whether the process that started it is still there. */
const PARENT_CHECK_MS = 1_000;

async function main(): Promise<number> {
  const config = processConfig();
  const started = Date.now();
  let stopping: Promise<void> | undefined;
  const stopAll = (reason: string, code: number, lastWords?: string) => {
    if (stopping) return;
    say(`${reason}: stopping`);
    stopping = stack.stop().catch((error: unknown) => say(`stop failed: ${(error as Error).message}`)).then(() => {
      if (lastWords) say(lastWords);
      say('stopped');
      process.exit(code);
    });
  };
  const giveUp = (name: ComponentName, reason: string, lastLines: string[]) =>
    stopAll(reason, 1, `${name} keeps failing; its last lines (more in ${stack.component(name).logFile}):\n${indented(lastLines)}`);
  const stack = new Stack({ config, echo: process.stdout, report: say, onGiveUp: giveUp });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => stopAll(signal, 0));
  // A launcher whose parent died (npm killed outright) would keep the stack running unseen.
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) stopAll('the process that started the launcher is gone', 0);
  }, PARENT_CHECK_MS).unref();

  try {
    await stack.start();
  } catch (error) {
    // A stop requested meanwhile ends the start; that stop reports and exits.
    if (stopping) return new Promise(() => undefined);
    throw error;
  }
  if (stopping) return new Promise(() => undefined);
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  // PORT=0: the API reported the port it bound.
  const apiUrl = config.publicUrl === 'http://localhost:0' ? stack.urls.api : config.publicUrl;
  say(`ready in ${seconds} s`);
  say(`API:             ${apiUrl}  (health: ${apiUrl}/readyz)`);
  if (stack.urls.temporalUi) say(`Temporal Web UI: ${stack.urls.temporalUi}`);
  say(`Data folder:     ${config.dataDir}  (logs in ${config.dataDir}/logs)`);
  const appUrl = config.appUrl ?? (config.appPort ? `http://localhost:${config.appPort}` : apiUrl);
  say('First API key:   npm run admin -- create-account   (prints an account and its key; --help lists more)');
  if (config.agentSignup) say(`                 or: curl -X POST -H 'Content-Type: application/json' -d '{}' ${appUrl}/api/agent/signup`);
  say('Press Ctrl-C to stop. A component that dies is restarted.');
  await new Promise(() => undefined);
  return 0;
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError || error instanceof MissingPieceError) say(error.message);
  else if (error instanceof ComponentStartError) say(`failed to start: ${error.message}\n${indented(error.lastLines)}`);
  else say(`failed to start: ${(error as Error).stack ?? String(error)}`);
  process.exit(1);
});
