/**
 * OAuth 2.1 records, in MongoDB so any API process can finish a flow another began:
 * - `oauth_clients` (`_id` the client id): dynamically registered public clients and their exact
 *   redirect URIs;
 * - `oauth_codes` (`_id` the SHA-256 of the code, never the code itself): one authorization, spent by
 *   deleting it, so a code works once even when two token requests race.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Db } from 'mongodb';
import { newId } from '../../base/ids';

/** Codes are exchanged within seconds (or a click, after a signup); anything older is refused. */
export const CODE_TTL_MS = 120_000;

export interface OAuthClientDoc {
  _id: string;
  client_name?: string;
  redirect_uris: string[];
  created_at: Date;
}

export interface OAuthCodeDoc {
  _id: string;
  client_id: string;
  redirect_uri: string;
  code_challenge: string;
  account_id: string;
  scope: string;
  expires_at: Date;
}

const digest = (value: string): string => createHash('sha256').update(value).digest('hex');

/** The S256 transformation of a PKCE verifier (RFC 7636 §4.2). */
export const s256 = (verifier: string): string => createHash('sha256').update(verifier).digest('base64url');

export class OAuthStore {
  private readonly clients;
  private readonly codes;

  constructor(db: Db, private readonly now: () => number = Date.now) {
    this.clients = db.collection<OAuthClientDoc>('oauth_clients');
    this.codes = db.collection<OAuthCodeDoc>('oauth_codes');
  }

  async register(redirectUris: string[], clientName: string | undefined): Promise<OAuthClientDoc> {
    const doc: OAuthClientDoc = {
      _id: newId('oc', this.now()),
      redirect_uris: redirectUris,
      ...(clientName ? { client_name: clientName } : {}),
      created_at: new Date(this.now()),
    };
    await this.clients.insertOne(doc);
    return doc;
  }

  async client(clientId: string): Promise<OAuthClientDoc | null> {
    return this.clients.findOne({ _id: clientId });
  }

  /** A new single-use code for an approved authorization; only its digest is stored. */
  async issueCode(grant: Omit<OAuthCodeDoc, '_id' | 'expires_at'>): Promise<string> {
    const code = randomBytes(32).toString('base64url');
    await this.codes.insertOne({ _id: digest(code), ...grant, expires_at: new Date(this.now() + CODE_TTL_MS) });
    return code;
  }

  /** Spends a code: the first caller gets its grant, later ones and expired codes get null. */
  async spendCode(code: string): Promise<OAuthCodeDoc | null> {
    const spent = await this.codes.findOneAndDelete({ _id: digest(code) });
    if (!spent || spent.expires_at.getTime() < this.now()) return null;
    return spent;
  }
}
