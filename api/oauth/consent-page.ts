/**
 * The consent page of the authorization endpoint: the account holder signs in with an API key and
 * approves (or denies) scope `api` for the client. Everything echoed is escaped; the page cannot be
 * framed, so approval cannot be clicked through another site.
 */
export interface ConsentView {
  clientName: string;
  redirectHost: string;
  /** The authorization request's parameters, posted back as they came. */
  request: Record<string, string>;
  error?: string;
  /** Whether the page offers to create an account (agent signup is enabled). */
  signup: boolean;
}

const escape = (value: string): string =>
  value.replace(/[&<>"']/g, (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char] ?? char);

/**
 * Headers of our OAuth pages. The form may post only here, and the browser may then follow our redirect
 * only to the client's own origin (browsers apply `form-action` to the redirect after a submission).
 */
export function pageHeaders(redirectUri?: string): Record<string, string> {
  const target = redirectUri ? ` ${new URL(redirectUri).origin}` : '';
  return {
    'X-Frame-Options': 'DENY',
    'Content-Security-Policy': `default-src 'none'; style-src 'unsafe-inline'; form-action 'self'${target}; frame-ancestors 'none'`,
    'Cache-Control': 'no-store',
    'Referrer-Policy': 'no-referrer',
  };
}

/** After a signup on the consent page: the new account's claim link, shown once, then on to the client. */
export function signedUpPage(view: { claimUrl: string; trialEndsAt: string; continueUrl: string; clientName: string }): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Account created</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem}</style></head>
<body>
  <h1>Account created</h1>
  <p>Your free account is active until ${escape(view.trialEndsAt)}. Keep it beyond that by claiming it, with this link (shown only now):</p>
  <p><a id="claim" href="${escape(view.claimUrl)}">${escape(view.claimUrl)}</a></p>
  <p><a id="continue" href="${escape(view.continueUrl)}">Continue to ${escape(view.clientName)}</a> (within two minutes).</p>
</body>
</html>`;
}

export function consentPage(view: ConsentView): string {
  const hidden = Object.entries(view.request)
    .map(([name, value]) => `<input type="hidden" name="${escape(name)}" value="${escape(value)}">`)
    .join('\n      ');
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Authorize ${escape(view.clientName)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem}input[type=password]{width:100%;padding:.4rem}.error{color:#b00}</style></head>
<body>
  <h1>Authorize ${escape(view.clientName)}</h1>
  <p><strong>${escape(view.clientName)}</strong> (returning to <code>${escape(view.redirectHost)}</code>) asks for scope <code>api</code>:
  to fetch, extract and crawl with your account's credits. Approving creates an API key for it, which you can revoke at any time.</p>
  ${view.error ? `<p class="error" role="alert">${escape(view.error)}</p>` : ''}
  <form method="post" action="/oauth/authorize" id="consent">
      ${hidden}
    <label for="api_key">Sign in with one of your API keys</label>
    <input id="api_key" name="api_key" type="password" autocomplete="off" required>
    <p><button type="submit" name="decision" value="approve" id="approve">Approve</button>
    <button type="submit" name="decision" value="deny" id="deny" formnovalidate>Deny</button></p>
  </form>
  ${view.signup ? `<p>No account yet? <button type="submit" form="consent" name="decision" value="signup" id="signup" formnovalidate>Create a free account and approve</button></p>` : ''}
</body>
</html>`;
}
