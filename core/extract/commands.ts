/**
 * Extract's commands: submit a domain for preparation, read a record, list an account's submissions and
 * its monthly allowance, list the domains served. The API validates, calls one of these, and presents.
 *
 * A domain is prepared once for everyone: a submission of a ready domain answers its record and spends
 * nothing; one while any account's preparation runs is `in_progress`; otherwise it takes a slot of the
 * account's UTC month and starts `prepare-<domain>` through the one start routine (core/jobs/start.ts).
 * Starting the workflow is compensated: if it cannot start, the record reads `failed`/`interrupted`
 * and the slot is returned; a start cut short is finished by the key's retry or given back by the
 * reconciler.
 */
import { WorkflowIdReusePolicy } from '@temporalio/client';
import type { Principal } from '../accounts';
import { isDuplicateKey } from '../../base/db';
import { ACCOUNT_ATTRIBUTE, STATUS_ATTRIBUTE } from '../jobs/workflow-names';
import { IdempotencyKeys, type Claimed } from '../jobs/idempotency';
import { idempotent, type IdempotencyWords } from '../jobs/idempotent';

import { startJob, startsCollection, type StartPlan } from '../jobs/start';
import type { Database } from '../../base/db';
import { problem } from '../../base/errors';
import type { TemporalHandle } from '../../base/temporal';
import {
  extractCollections,
  monthOf,
  prepareWorkflowId,
  presentDomain,
  submissionId,
  type PreparedDomainDoc,
} from './store';

import { PREPARE_WORKFLOW_TYPE } from '../jobs/workflow-names';
import { giveBackPreparation } from './ends';
import { requestRefresh } from './refresh';
export { PREPARE_WORKFLOW_TYPE };

/** Extract's words for idempotency refusals, as its clients know them. */
const extractIdempotencyWords: IdempotencyWords = (refusal) =>
  refusal === 'invalid_key'
    ? problem('invalid_argument', 'Idempotency-Key must be 1 to 255 characters.', { members: { reason: 'invalid_idempotency_key' } })
    : refusal === 'in_flight'
      ? problem('idempotency_conflict', 'A request with this Idempotency-Key is still in progress; retry when it ends.', { members: { reason: 'in_flight' } })
      : problem('idempotency_conflict', 'This Idempotency-Key was used with a different body.', { members: { reason: 'idempotency_conflict' } });

export interface Allowance {
  used: number;
  limit: number;
  remaining: number;
  month: string;
}

export interface ExtractDeps {
  db: Database;
  temporal: TemporalHandle;
  taskQueue: string;
  now?: () => Date;
}

export function createExtractCommands(deps: ExtractDeps) {
  const { domains, submissions, slots } = extractCollections(deps.db.db);
  const now = deps.now ?? (() => new Date());
  const idempotency = new IdempotencyKeys(deps.db.db, 'extract', () => now().getTime());

  async function allowance(principal: Principal): Promise<Allowance> {
    const month = monthOf(now());
    const used = await slots.countDocuments({ account_id: principal.accountId, month, returned: false });
    const limit = principal.plan.preparationSlots;
    return { used, limit, remaining: Math.max(0, limit - used), month };
  }

  async function remember(principal: Principal, domain: string): Promise<void> {
    await submissions.updateOne(
      { _id: submissionId(principal.accountId, domain) },
      { $setOnInsert: { account_id: principal.accountId, domain, submitted_at: now() } },
      { upsert: true },
    );
  }

  /**
   * The start routine's plan for preparation `slotId` of `domain` (core/jobs/start.ts): workflow
   * `prepare-<domain>`; giving back reads the record as `failed`/`interrupted` and returns the slot.
   */
  function preparationStart(principal: Principal, domain: string, exampleUrls: string[], slotId: string, claim: Claimed | undefined): StartPlan {
    return {
      kind: 'prepare',
      recordId: domain,
      accountId: principal.accountId,
      claimId: claim?.id ?? null,
      attempt: slotId,
      workflowType: PREPARE_WORKFLOW_TYPE,
      workflow: {
        taskQueue: deps.taskQueue,
        workflowId: prepareWorkflowId(domain),
        workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
        args: [{ domain, exampleUrls }],
        typedSearchAttributes: [
          { key: ACCOUNT_ATTRIBUTE, value: principal.accountId },
          { key: STATUS_ATTRIBUTE, value: 'preparing' },
        ],
      },
      take: () => remember(principal, domain),
      giveBack: () => giveBackPreparation(deps.db.db, domain, slotId, now()),
      ...(claim ? { owned: claim.owned } : {}),
    };
  }

  async function start(principal: Principal, domain: string, exampleUrls: string[], previous: PreparedDomainDoc | null, claim?: Claimed): Promise<PreparedDomainDoc> {
    const current = await allowance(principal);
    if (current.remaining <= 0) {
      throw problem('out_of_allowance', `No preparation slots left in ${current.month} (${current.limit} per month); the allowance resets on the first day of the next UTC month.`);
    }
    const at = now();
    const slotId = `${principal.accountId}:${current.month}:${domain}:${at.getTime()}`;
    const record: PreparedDomainDoc = {
      _id: domain,
      status: 'preparing',
      state: 'received',
      roles: [],
      started_by: slotId,
      example_urls: exampleUrls,
      submitted_at: at,
      updated_at: at,
      verticals: [],
      ...(previous?.recipe_version ? { recipe_version: previous.recipe_version } : {}),
    };
    await startJob({ db: deps.db.db, client: deps.temporal.client }, {
      ...preparationStart(principal, domain, exampleUrls, slotId, claim),
      // Only one submission moves a domain into preparation: a new record is inserted (the unique _id
      // decides), a failed one is replaced only while it still reads as the failure this request saw.
      take: async () => {
        try {
          if (previous) {
            const replaced = await domains.replaceOne({ _id: domain, status: 'failed', updated_at: previous.updated_at }, record);
            if (replaced.matchedCount === 0) throw problem('in_progress', `A preparation of ${domain} is already running; poll its status.`, { members: { reason: 'in_progress' } });
          } else {
            await domains.insertOne(record);
          }
        } catch (error) {
          if (isDuplicateKey(error)) throw problem('in_progress', `A preparation of ${domain} is already running; poll its status.`, { members: { reason: 'in_progress' } });
          throw error;
        }
        await slots.insertOne({ _id: slotId, account_id: principal.accountId, domain, month: current.month, created_at: at, returned: false });
        await remember(principal, domain);
      },
    });
    return record;
  }

  return {
    allowance,

    /** 202's body: the record as it stands after the submission. */
    async submit(principal: Principal, body: { domain: string; example_urls?: string[] }, idempotencyKey?: string): Promise<Record<string, unknown>> {
      const domain = body.domain;
      const exampleUrls = body.example_urls ?? [];
      const submitted = await idempotent(
        idempotency,
        extractIdempotencyWords,
        { accountId: principal.accountId, key: idempotencyKey, body, reserve: () => domain },
        {
          replay: async (resultId) => (await domains.findOne({ _id: resultId })) ?? undefined,
          run: async (claimed) => {
            const existing = await domains.findOne({ _id: domain });
            const cutShort = claimed?.takenOver && existing?.status === 'preparing' ? await startsCollection(deps.db.db).findOne({ kind: 'prepare', record_id: domain, attempt: existing.started_by, claim_id: claimed.id }) : null;
            if (existing && cutShort) {
              // This key's request died while starting this preparation: its start is finished here.
              await startJob({ db: deps.db.db, client: deps.temporal.client }, preparationStart(principal, domain, existing.example_urls, existing.started_by, claimed));
              return { value: existing, resultId: domain };
            }
            if (existing?.status === 'ready') {
              await remember(principal, domain);
              return { value: existing, resultId: domain };
            }
            if (existing?.status === 'preparing') throw problem('in_progress', `A preparation of ${domain} is already running; poll its status.`, { members: { reason: 'in_progress' } });
            return { value: await start(principal, domain, exampleUrls, existing, claimed), resultId: domain };
          },
        },
      );
      return presentDomain(submitted.value, principal.accountId);
    },

    /** The record, for an account that submitted the domain; 404 otherwise. */
    async read(principal: Principal, domain: string): Promise<Record<string, unknown>> {
      const [submitted, record] = await Promise.all([
        submissions.countDocuments({ _id: submissionId(principal.accountId, domain) }, { limit: 1 }),
        domains.findOne({ _id: domain }),
      ]);
      if (!submitted || !record) throw problem('not_found', `This account never submitted ${domain}.`, { members: { reason: 'not_found' } });
      return presentDomain(record, principal.accountId);
    },

    async list(principal: Principal): Promise<{ allowance: Allowance; domains: Array<Record<string, unknown>> }> {
      const mine = await submissions.find({ account_id: principal.accountId }).toArray();
      const records = mine.length > 0 ? await domains.find({ _id: { $in: mine.map((submission) => submission.domain) } }).toArray() : [];
      records.sort((a, b) => b.submitted_at.getTime() - a.submitted_at.getTime() || a._id.localeCompare(b._id));
      return { allowance: await allowance(principal), domains: records.map((record) => presentDomain(record, principal.accountId)) };
    },

    /** A request found required fields missing: a re-preparation, at most hourly (refresh.ts). */
    requestRefresh(domain: string): Promise<boolean> {
      return requestRefresh({ db: deps.db.db, client: deps.temporal.client, taskQueue: deps.taskQueue, now }, domain);
    },

    /** Every domain Extract serves now. */
    async served(): Promise<Array<{ domain: string; verticals: string[]; warm: boolean }>> {
      const ready = await domains.find({ status: 'ready' }).toArray();
      return ready.map((record) => ({ domain: record._id, verticals: record.verticals ?? [], warm: true })).sort((a, b) => a.domain.localeCompare(b.domain));
    },
  };
}

export type ExtractCommands = ReturnType<typeof createExtractCommands>;
