/**
 * The account's HMAC signing keys, in two slots: `active` (signs every delivery) and `candidate` (staged
 * by a rotation, shown once, active after `finalize`). Each slot is one document whose `_id` is
 * `<account>:<slot>`, so two concurrent rotations cannot both stage a key (the second insert collides),
 * and every read is an `_id` look-up. Secrets are sealed with the server key and never returned again.
 *
 * Rotation: `rotate` with no active key creates the active key; with one, it stages a candidate
 * (`candidate_pending` while one is staged). Until `finalize`, deliveries stay signed by the active key,
 * so receivers that have not yet added the new secret keep verifying; receivers add the candidate's
 * secret next to the old one, then the owner finalizes and the new kid signs from then on.
 */
import { randomBytes } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import { isDuplicateKey } from '../../base/db';
import { problem } from '../../base/errors';
import { newUlid } from '../../base/ids';
import { createSecretBox, type SecretBox } from './secret-box';
import type { SigningKey } from './signature';

export const HMAC_KEYS = 'hmac_keys';
const SECRET_BYTES = 32;

type Slot = 'active' | 'candidate';

interface KeyDocument {
  _id: string;
  account_id: string;
  kid: string;
  /** The secret sealed by the secret box, bound to account and kid. */
  sealed: string;
  created_at: Date;
}

export interface KeyMeta {
  kid: string;
  created_at: string;
}

export interface HmacKeys {
  list(accountId: string): Promise<{ active: KeyMeta | null; candidate: KeyMeta | null }>;
  /** Creates the active key, or stages a candidate; the only answer that carries the secret. */
  rotate(accountId: string): Promise<{ kid: string; secret: string; created_at: string }>;
  finalize(accountId: string): Promise<{ active_kid: string; created_at: string }>;
  cancel(accountId: string): Promise<void>;
  /** The key deliveries are signed with now, if the account has one. */
  signingKey(accountId: string): Promise<SigningKey | undefined>;
  hasActiveKey(accountId: string): Promise<boolean>;
}

const slotId = (accountId: string, slot: Slot): string => `${accountId}:${slot}`;
const sealContext = (accountId: string, kid: string): string => `hmac:${accountId}:${kid}`;
const meta = (doc: KeyDocument): KeyMeta => ({ kid: doc.kid, created_at: doc.created_at.toISOString() });

export function createHmacKeys(db: Db, box: SecretBox, clock: () => Date = () => new Date()): HmacKeys {
  const keys: Collection<KeyDocument> = db.collection<KeyDocument>(HMAC_KEYS);

  async function slots(accountId: string): Promise<{ active?: KeyDocument; candidate?: KeyDocument }> {
    const found = await keys.find({ _id: { $in: [slotId(accountId, 'active'), slotId(accountId, 'candidate')] } }).toArray();
    const active = found.find((doc) => doc._id === slotId(accountId, 'active'));
    const candidate = found.find((doc) => doc._id === slotId(accountId, 'candidate'));
    // A finalize interrupted between its two writes leaves the promoted key in both slots.
    return { active, candidate: candidate && candidate.kid !== active?.kid ? candidate : undefined };
  }

  async function create(accountId: string, slot: Slot): Promise<{ kid: string; secret: string; created_at: string } | undefined> {
    const secret = randomBytes(SECRET_BYTES);
    const createdAt = clock();
    const kid = newUlid(createdAt.getTime());
    try {
      await keys.insertOne({
        _id: slotId(accountId, slot),
        account_id: accountId,
        kid,
        sealed: box.seal(secret, sealContext(accountId, kid)),
        created_at: createdAt,
      });
    } catch (error) {
      if (isDuplicateKey(error)) return undefined;
      throw error;
    }
    return { kid, secret: secret.toString('base64'), created_at: createdAt.toISOString() };
  }

  return {
    async list(accountId) {
      const { active, candidate } = await slots(accountId);
      return { active: active ? meta(active) : null, candidate: candidate ? meta(candidate) : null };
    },

    async rotate(accountId) {
      const current = await slots(accountId);
      if (current.candidate) throw problem('candidate_pending', 'A candidate key is already staged: finalize it or cancel the rotation first.');
      const created = await create(accountId, current.active ? 'candidate' : 'active');
      if (created) return created;
      // Lost a race to another rotation of the same account: its key is the one staged.
      throw problem('candidate_pending', 'Another rotation staged a key at the same time: finalize it or cancel the rotation first.');
    },

    async finalize(accountId) {
      const { candidate } = await slots(accountId);
      if (!candidate) throw problem('no_candidate', 'No candidate key is staged: call POST /v1/hmac/keys/rotate first.');
      // Promote first, then clear the slot: a crash in between leaves the same kid in both, which
      // `slots` reads as promoted and the next finalize or rotation tidies up.
      const { _id: _candidateId, ...promoted } = candidate;
      await keys.replaceOne({ _id: slotId(accountId, 'active') }, promoted, { upsert: true });
      await keys.deleteOne({ _id: slotId(accountId, 'candidate'), kid: candidate.kid });
      return { active_kid: candidate.kid, created_at: candidate.created_at.toISOString() };
    },

    async cancel(accountId) {
      const { candidate } = await slots(accountId);
      if (!candidate) throw problem('no_candidate', 'No candidate key is staged; nothing to cancel.');
      await keys.deleteOne({ _id: slotId(accountId, 'candidate'), kid: candidate.kid });
    },

    async signingKey(accountId) {
      const active = await keys.findOne({ _id: slotId(accountId, 'active') });
      if (!active) return undefined;
      return { kid: active.kid, secret: box.open(active.sealed, sealContext(accountId, active.kid)) };
    },

    async hasActiveKey(accountId) {
      return (await keys.countDocuments({ _id: slotId(accountId, 'active') }, { limit: 1 })) > 0;
    },
  };
}

/** The process's one key store, or undefined when the server has no SECRETS_KEY (signing is then unavailable). */
export function hmacKeysOf(db: Db, secretsKey: string | undefined): HmacKeys | undefined {
  return secretsKey ? createHmacKeys(db, createSecretBox(secretsKey)) : undefined;
}
