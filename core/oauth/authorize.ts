/**
 * The authorization request (OAuth 2.1 §4.1): the client and its exact redirect URI are checked first,
 * and a request failing those is answered here, never redirected (no open redirect). Every later
 * failure goes back to the client's redirect URI with `error` and the caller's `state`.
 */
import type { OAuthClientDoc, OAuthStore } from './store';

export const SCOPE = 'api';

export interface AuthorizationRequest {
  client: OAuthClientDoc;
  redirectUri: string;
  state?: string;
  codeChallenge: string;
  /** The parameters as they came, for the consent form to post back. */
  echoed: Record<string, string>;
}

export type Checked =
  | { ok: true; request: AuthorizationRequest }
  /** Shown on our own page: the redirect URI cannot be trusted. */
  | { ok: false; page: string }
  /** Sent to the (verified) redirect URI. */
  | { ok: false; redirect: string };

const PARAMETERS = ['response_type', 'client_id', 'redirect_uri', 'scope', 'state', 'code_challenge', 'code_challenge_method', 'resource'];

/** The redirect back to the client with these parameters added to its query. */
export function redirectTo(redirectUri: string, parameters: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(parameters)) if (value !== undefined) url.searchParams.set(name, value);
  return url.href;
}

export async function checkAuthorization(store: OAuthStore, given: Record<string, unknown>): Promise<Checked> {
  const value = (name: string): string | undefined => (typeof given[name] === 'string' ? (given[name] as string) : undefined);
  const clientId = value('client_id');
  const client = clientId ? await store.client(clientId) : null;
  if (!client) return { ok: false, page: 'Unknown client_id: the application asking for access is not registered.' };
  const redirectUri = value('redirect_uri');
  // Exact string match against a registered URI; with a single one registered it may be omitted.
  const chosen = redirectUri ?? (client.redirect_uris.length === 1 ? client.redirect_uris[0] : undefined);
  if (!chosen || !client.redirect_uris.includes(chosen)) {
    return { ok: false, page: 'The redirect_uri is not one registered for this client.' };
  }
  const state = value('state');
  const refuse = (error: string, description: string): Checked => ({
    ok: false,
    redirect: redirectTo(chosen, { error, error_description: description, state }),
  });
  if (value('response_type') !== 'code') return refuse('unsupported_response_type', 'Only response_type=code is supported.');
  const challenge = value('code_challenge');
  if (!challenge || !/^[A-Za-z0-9_-]{43}$/.test(challenge)) return refuse('invalid_request', 'PKCE is required: code_challenge (S256, 43 characters).');
  if (value('code_challenge_method') !== 'S256') return refuse('invalid_request', 'Only code_challenge_method=S256 is supported.');
  const scopes = (value('scope') ?? '').split(' ').filter(Boolean);
  if (!scopes.includes(SCOPE) || scopes.some((scope) => scope !== SCOPE)) return refuse('invalid_scope', `The only scope is "${SCOPE}", and it must be asked for.`);
  const echoed = Object.fromEntries(PARAMETERS.flatMap((name) => (value(name) === undefined ? [] : [[name, value(name) as string]])));
  return { ok: true, request: { client, redirectUri: chosen, state, codeChallenge: challenge, echoed } };
}
