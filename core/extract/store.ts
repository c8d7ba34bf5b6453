/**
 * Extract's records. Every hot read is an `_id` look-up:
 * - `prepared_domains` (`_id` the domain): the preparation's state machine, one per domain, shared by
 *   every account (a domain is prepared once, for everyone);
 * - `extract_recipes` (`_id` `<domain>:<version>`): immutable once verified; the domain record names
 *   the version in force;
 * - `domain_submissions` (`_id` `<account>:<domain>`): which accounts submitted a domain (and so may read
 *   its roles);
 * - `preparation_slots` (`_id` `<account>:<month>:<domain>:<time>`): one per preparation an account
 *   started, insert-only but for `returned`, set when the preparation failed in a way that gives the
 *   slot back. The month's allowance counts those not returned.
 */
import type { Collection, Db } from 'mongodb';
import type { IndexRegistration } from '../../base/db';
import type { DomainRecipe } from '../../engine';
import type { FailureCode, PreparationState, RoleStatus } from './preparation';

export type { FailureCode, PreparationState, RoleStatus };

export const PREPARED_DOMAINS = 'prepared_domains';
export const EXTRACT_RECIPES = 'extract_recipes';
export const DOMAIN_SUBMISSIONS = 'domain_submissions';
export const PREPARATION_SLOTS = 'preparation_slots';

export type PreparationStatus = 'preparing' | 'ready' | 'failed';


/** Whether each failure keeps the submission's slot (the interface's table). */
export const SLOT_CONSUMED: Readonly<Record<FailureCode, boolean>> = {
  interrupted: false,
  preparation_exhausted: false,
  discovery_failed: false,
  unpreparable: false,
  preparation_failed: true,
  verification_failed: true,
  unsupported: true,
};


export interface PreparedDomainDoc {
  _id: string;
  status: PreparationStatus;
  state: PreparationState;
  roles: RoleStatus[];
  failure?: { code: FailureCode; detail: string; slot_consumed: boolean };
  /** The slot of the preparation in progress (returned on some failures). */
  started_by: string;
  example_urls: string[];
  submitted_at: Date;
  updated_at: Date;
  /** The recipe in force, once ready. */
  recipe_version?: number;
  /** A request found the recipe no longer matching and asked for a re-preparation then. */
  refresh_requested_at?: Date;
  /** The last re-preparation failed; the recipe in force stays. */
  refresh_failure?: { code: FailureCode; detail: string; at: Date };
  verticals: string[];
}

export interface SubmissionDoc {
  _id: string;
  account_id: string;
  domain: string;
  submitted_at: Date;
}

export interface SlotDoc {
  _id: string;
  account_id: string;
  domain: string;
  /** `YYYY-MM` (UTC) the slot counts in. */
  month: string;
  created_at: Date;
  returned: boolean;
}

export interface RecipeDoc extends DomainRecipe {
  _id: string;
}

export const EXTRACT_INDEXES: IndexRegistration = {
  [DOMAIN_SUBMISSIONS]: [{ key: { account_id: 1 }, name: 'account' }],
  [PREPARATION_SLOTS]: [{ key: { account_id: 1, month: 1 }, name: 'account_month' }],
  [PREPARED_DOMAINS]: [{ key: { status: 1 }, name: 'status' }],
};

export interface ExtractCollections {
  domains: Collection<PreparedDomainDoc>;
  recipes: Collection<RecipeDoc>;
  submissions: Collection<SubmissionDoc>;
  slots: Collection<SlotDoc>;
}

export const extractCollections = (db: Db): ExtractCollections => ({
  domains: db.collection<PreparedDomainDoc>(PREPARED_DOMAINS),
  recipes: db.collection<RecipeDoc>(EXTRACT_RECIPES),
  submissions: db.collection<SubmissionDoc>(DOMAIN_SUBMISSIONS),
  slots: db.collection<SlotDoc>(PREPARATION_SLOTS),
});

export const submissionId = (accountId: string, domain: string): string => `${accountId}:${domain}`;
export const recipeId = (domain: string, version: number): string => `${domain}:${version}`;
export const monthOf = (date: Date): string => date.toISOString().slice(0, 7);
export { prepareWorkflowId } from '../jobs/workflow-names';

/**
 * The record as the interface shows it to `viewer` (an account that submitted the domain; none: no
 * roles). The record is one for everyone, but what one account sent is its own: when the preparation
 * ran from another account's `example_urls`, the pages each role works from (those examples, or their
 * siblings) are left out of the roles this viewer sees.
 */
export function presentDomain(doc: PreparedDomainDoc, viewer: string | undefined): Record<string, unknown> {
  const preparer = doc.started_by.startsWith(`${viewer}:`);
  const ownPages = preparer || (doc.example_urls ?? []).length === 0;
  return {
    domain: doc._id,
    status: doc.status,
    state: doc.state,
    ...(viewer !== undefined ? { roles: ownPages ? doc.roles : doc.roles.map(({ url: _url, ...role }) => role) } : {}),
    ...(doc.failure ? { failure: doc.failure } : {}),
    submitted_at: doc.submitted_at.toISOString(),
    updated_at: doc.updated_at.toISOString(),
  };
}
