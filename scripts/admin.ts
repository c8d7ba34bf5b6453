/**
 * `npm run admin -- <command>`: manage accounts, API keys and plans without agent signup. Connects to
 * MONGODB_URL (MONGODB_DATABASE), or when unset to the FerretDB of the stack running on DATA_DIR, at
 * the port its launcher recorded (scripts/stack/record.ts); with neither it connects nowhere, rather
 * than to whatever listens on the configured port. Add `--json` for machine-readable output.
 *
 * Changes are seen by running API processes within KEY_CACHE_TTL_MS (their key cache expiry).
 */
import { parseArgs } from 'node:util';
import { createAccounts, isAccountsError, periodOf, type Accounts } from '../core/accounts';
import { isPeriod } from '../core/accounts/periods';
import { processConfig, ConfigError } from '../base/config';
import type { Db } from 'mongodb';
import { createRunReader, runStatusOf } from '../core/batch/runs/view';
import { BatchStore } from '../core/batch/store';
import { openDatabase } from '../base/db';
import { SERVICE_INDEXES } from '../core/indexes';
import { createLogger } from '../base/log';
import { hostsInBackoff } from '../core/politeness/paused';
import { readDatabaseRecord } from './stack/record';

const USAGE = `usage: npm run admin -- <command> [options] [--json]

  plans                                        list the plans and their limits
  create-account [--plan P] [--email E] [--name N] [--credits C] [--concurrency K] [--no-key]
                                               create an account (and its first API key, printed once)
  show-account ACCOUNT                         plan, state and keys of an account
  create-key ACCOUNT [--name N] [--cap C]      create an API key (at most 10 active per account)
  revoke-key KEY_ID                            revoke an API key
  set-key-cap KEY_ID C|none                    cap the credits one key may use per month
  set-plan ACCOUNT PLAN [--credits C] [--concurrency K]
                                               change the plan; --credits/--concurrency override its limits
  delete-account ACCOUNT                       delete an account (its keys stop working)
  usage ACCOUNT [--period YYYY-MM]             credits used in a month (this month by default)
  jobs ACCOUNT [--limit N]                     the account's Batch jobs, newest first, with their latest run's progress
  hosts                                        hosts every job leaves alone for now (429/503 back-off), one line each`;

class UsageError extends Error {}

const count = (value: string | undefined, what: string): number | undefined => {
  if (value === undefined) return undefined;
  if (!/^\d{1,12}$/.test(value)) throw new UsageError(`${what} must be a whole number, got "${value}"`);
  return Number(value);
};

function need(positionals: string[], index: number, what: string): string {
  const value = positionals[index];
  if (!value) throw new UsageError(`missing ${what}`);
  return value;
}

type Options = Record<string, string | boolean | undefined>;
type Output = Record<string, unknown>;

/** An account's Batch jobs, newest first, each with its latest run's status and progress. */
async function listJobs(db: Db, accountId: string, limit: number): Promise<Output> {
  const store = BatchStore.of(db);
  const found = await store.jobs.find({ account_id: accountId, status: { $ne: 'deleted' } }).sort({ _id: -1 }).limit(limit).toArray();
  const runs = await createRunReader(store).byIds(found.flatMap((job) => (job.latest_run_id ? [job.latest_run_id] : [])));
  return {
    account_id: accountId,
    jobs: found.map((job) => {
      const view = job.latest_run_id ? runs.get(job.latest_run_id) : undefined;
      const stats = view?.run.stats;
      return {
        job_id: job._id,
        status: job.status,
        tasks: job.task_count,
        ...(job.name ? { name: job.name } : {}),
        latest_run: view
          ? {
              run_id: view.run._id,
              status: runStatusOf(view),
              ...(view.control?.pause_state === 'paused' ? { paused: true } : {}),
              progress: `${stats?.completed ?? 0}/${Math.max(stats?.total ?? 0, job.task_count)}`,
              successful: stats?.successful ?? 0,
              failed: stats?.failed ?? 0,
              credits: stats?.spend.credits ?? 0,
            }
          : null,
      };
    }),
  };
}

async function run(accounts: Accounts, db: Db, command: string, positionals: string[], options: Options): Promise<Output> {
  const text = (name: string): string | undefined => (typeof options[name] === 'string' ? (options[name] as string) : undefined);
  const { store, plans } = accounts;
  switch (command) {
    case 'plans':
      return { plans: plans.names().map((name) => plans.resolve(name)) };
    case 'create-account': {
      const plan = text('plan') ?? 'free';
      if (!plans.has(plan)) throw new UsageError(`unknown plan "${plan}"; plans: ${plans.names().join(', ')}`);
      const overrides = { credits: count(text('credits'), '--credits'), concurrency: count(text('concurrency'), '--concurrency') };
      const account = await store.createAccount({
        plan,
        overrides: Object.fromEntries(Object.entries(overrides).filter(([, value]) => value !== undefined)),
        email: text('email') ?? null,
        name: text('name') ?? null,
      });
      const created = options['no-key'] ? undefined : await store.createKey(account._id, { name: 'first key' });
      return { account_id: account._id, plan, ...(created ? { api_key: created.key, key_id: created.doc.key_id } : {}) };
    }
    case 'show-account': {
      const id = need(positionals, 0, 'ACCOUNT');
      const account = await store.account(id);
      if (!account) throw new UsageError(`no account ${id}`);
      const keys = await store.listKeys(id);
      return {
        account_id: id,
        plan: accounts.plans.resolve(account.plan, account.overrides ?? {}),
        email: account.email,
        is_agent: account.is_agent,
        claimed: Boolean(account.claimed_at),
        deleted: Boolean(account.deleted_at),
        keys: keys.map((key) => ({
          key_id: key.key_id,
          name: key.name,
          starts_with: key.prefix,
          credit_cap: key.credit_cap,
          revoked: Boolean(key.revoked_at),
        })),
      };
    }
    case 'create-key': {
      const created = await store.createKey(need(positionals, 0, 'ACCOUNT'), {
        name: text('name') ?? null,
        creditCap: count(text('cap'), '--cap') ?? null,
      });
      return { key_id: created.doc.key_id, api_key: created.key };
    }
    case 'revoke-key': {
      const key = await store.revokeKey(need(positionals, 0, 'KEY_ID'));
      return { key_id: key.key_id, revoked: true };
    }
    case 'set-key-cap': {
      const raw = need(positionals, 1, 'C|none');
      const cap = raw === 'none' ? null : (count(raw, 'the cap') as number);
      const key = await store.setKeyCap(need(positionals, 0, 'KEY_ID'), cap);
      return { key_id: key.key_id, credit_cap: cap };
    }
    case 'set-plan': {
      const id = need(positionals, 0, 'ACCOUNT');
      const plan = need(positionals, 1, 'PLAN');
      if (!plans.has(plan)) throw new UsageError(`unknown plan "${plan}"; plans: ${plans.names().join(', ')}`);
      const overrides = Object.fromEntries(
        Object.entries({ credits: count(text('credits'), '--credits'), concurrency: count(text('concurrency'), '--concurrency') }).filter(
          ([, value]) => value !== undefined,
        ),
      );
      await store.setPlan(id, plan, overrides);
      const account = await store.liveAccount(id);
      return { account_id: id, plan: plans.resolve(account.plan, account.overrides ?? {}) };
    }
    case 'delete-account': {
      const id = need(positionals, 0, 'ACCOUNT');
      await store.deleteAccount(id);
      return { account_id: id, deleted: true };
    }
    case 'usage': {
      const id = need(positionals, 0, 'ACCOUNT');
      const period = text('period') ?? periodOf(accounts.clock.now());
      if (!isPeriod(period)) throw new UsageError(`--period must read YYYY-MM, got "${period}"`);
      const account = await store.account(id);
      if (!account) throw new UsageError(`no account ${id}`);
      const limit = plans.resolve(account.plan, account.overrides ?? {}).credits;
      const usage = await accounts.charging.usage(id, period);
      return { account_id: id, period, used: usage.used, held: usage.held, limit, remaining: Math.max(0, limit - usage.used), keys: usage.keys };
    }
    case 'jobs': {
      const id = need(positionals, 0, 'ACCOUNT');
      if (!(await store.account(id))) throw new UsageError(`no account ${id}`);
      const limit = count(text('limit'), '--limit') ?? 20;
      if (limit < 1 || limit > 1_000) throw new UsageError('--limit must be 1 to 1000');
      return listJobs(db, id, limit);
    }
    case 'hosts': {
      const now = Date.now();
      const hosts = await hostsInBackoff(db, new Date(now));
      return {
        hosts_in_backoff: hosts.length,
        ...Object.fromEntries(
          hosts.map((host) => [host.host, `back-off until ${host.until.toISOString()} (${Math.ceil((host.until.getTime() - now) / 1000)} s left, ${host.level} in a row${host.status ? `, last ${host.status}` : ''})`]),
        ),
      };
    }
    default:
      throw new UsageError(command ? `unknown command "${command}"` : 'no command given');
  }
}

function print(output: Output, json: boolean): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(output, null, 2)}\n`);
    return;
  }
  for (const [name, value] of Object.entries(output)) {
    process.stdout.write(`${name.padEnd(12)} ${typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value)}\n`);
  }
  if (typeof output.api_key === 'string') process.stdout.write('\nThe API key is shown only now: store it.\n');
}

async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' }, plan: { type: 'string' }, email: { type: 'string' },
        name: { type: 'string' }, credits: { type: 'string' }, concurrency: { type: 'string' }, cap: { type: 'string' },
        period: { type: 'string' }, 'no-key': { type: 'boolean' }, limit: { type: 'string' },
      },
    });
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  const [command = '', ...positionals] = parsed.positionals;
  if (parsed.values.help || command === '' || command === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return command === '' && !parsed.values.help ? 2 : 0;
  }
  const config = processConfig();
  const log = createLogger('error', { component: 'admin' }, (line) => process.stderr.write(`${line}\n`));
  let mongodbUrl = config.mongodbUrl;
  if (mongodbUrl === undefined) {
    const local = readDatabaseRecord(config.dataDir);
    if (!local.ok) {
      process.stderr.write(`no database to use: ${local.reason}; start the stack with \`npm start\` (DATA_DIR ${config.dataDir}) or set MONGODB_URL\n`);
      return 1;
    }
    mongodbUrl = local.url;
  }
  let db;
  try {
    db = await openDatabase({ mongodbUrl, mongodbDatabase: config.mongodbDatabase }, log, { indexes: SERVICE_INDEXES });
  } catch (error) {
    process.stderr.write(`cannot reach the database at ${mongodbUrl} (${(error as Error).message}); start the stack with \`npm start\` or set MONGODB_URL\n`);
    return 1;
  }
  try {
    const accounts = createAccounts({ db: db.db, config, log });
    print(await run(accounts, db.db, command, positionals, parsed.values), parsed.values.json === true);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`${error.message}\n\n${USAGE}\n`);
      return 2;
    }
    if (isAccountsError(error)) {
      process.stderr.write(`${error.message}\n`);
      return 1;
    }
    throw error;
  } finally {
    await db.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof ConfigError ? error.message : ((error as Error).stack ?? String(error))}\n`);
    process.exit(1);
  },
);
