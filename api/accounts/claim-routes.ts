/**
 * The claim page behind an agent signup's `claimUrl`: a person opens it, gives an email address and
 * so takes ownership of the account. The API key the agent holds keeps working. The link itself is
 * the credential (its token is stored only as a SHA-256, checked by core/accounts/claims.ts), so the page
 * sends no referrer.
 */
import type { Accounts } from '../../core/accounts';
import type { ClaimView } from '../../core/accounts/claims';
import type { Services } from '../../core/services';
import type { AppContext } from '../http/context';
import type { Route } from '../http/routes';

const escapeHtml = (value: string): string => value.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

const EMAIL = /^[^\s@<>()[\]\\,;:"]{1,64}@[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/i;

function page(ctx: AppContext, status: number, title: string, body: string): void {
  ctx.status = status;
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'");
  ctx.set('X-Frame-Options', 'DENY');
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)} · Fetchplane</title>
<style>body{font-family:system-ui,sans-serif;margin:3rem auto;max-width:34rem;padding:0 1rem;line-height:1.5}
input{font:inherit;padding:.4rem;width:100%;box-sizing:border-box}button{font:inherit;padding:.4rem 1rem;margin-top:.8rem}
.error{color:#a00}code{background:#f3f3f3;padding:0 .2rem}</style></head>
<body><h1>${escapeHtml(title)}</h1>${body}</body></html>`;
}

function form(accountId: string, error?: string, email = ''): string {
  return `<p>An agent created the account <code>${escapeHtml(accountId)}</code> on the free plan. Give your email address to take
ownership of it. The API key the agent holds keeps working.</p>
${error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : ''}
<form method="post"><label for="email">Email address</label>
<input id="email" name="email" type="email" required maxlength="254" autocomplete="email" value="${escapeHtml(email)}">
<button type="submit">Claim this account</button></form>`;
}

function readEmail(ctx: AppContext, raw: Buffer): string {
  const text = raw.toString('utf8');
  if (ctx.is('application/json')) {
    try {
      const parsed = JSON.parse(text) as unknown;
      const email = typeof parsed === 'object' && parsed !== null ? (parsed as { email?: unknown }).email : undefined;
      return typeof email === 'string' ? email.trim() : '';
    } catch {
      return '';
    }
  }
  return (new URLSearchParams(text).get('email') ?? '').trim();
}

export function claimRoutes(deps: { accounts: Accounts; services: Pick<Services, 'claims'> }): Route[] {
  const { claims } = deps.services;

  const notFound = (ctx: AppContext) =>
    page(ctx, 404, 'Claim link not valid', '<p>This claim link is not valid. Check that it was copied whole.</p>');
  const claimed = (ctx: AppContext, account: ClaimView) =>
    page(ctx, 200, 'Account claimed', `<p>The account <code>${escapeHtml(account.accountId)}</code> belongs to
${escapeHtml(account.email ?? 'its owner')}. Its API key keeps working.</p>`);

  return [
    {
      method: 'GET',
      path: '/claim/{account_id}/{token}',
      operationId: 'getClaimPage',
      summary: 'The page where a person claims an account an agent created.',
      tags: ['Agent signup'],
      internal: true,
      responses: { 200: { description: 'HTML page' }, 404: { description: 'Not a valid claim link' } },
      async handler(ctx, { params }) {
        const account = await claims.open(params.account_id ?? '', params.token ?? '');
        if (!account) return notFound(ctx);
        if (account.claimed) return claimed(ctx, account);
        page(ctx, 200, 'Claim your account', form(account.accountId));
      },
    },
    {
      method: 'POST',
      path: '/claim/{account_id}/{token}',
      operationId: 'claimAccount',
      summary: 'Claims the account with an email address (form or JSON `{email}`).',
      tags: ['Agent signup'],
      internal: true,
      body: 'raw',
      responses: { 200: { description: 'HTML page' }, 400: { description: 'Invalid email' }, 404: { description: 'Not a valid claim link' } },
      async handler(ctx, { params, rawBody }) {
        const account = await claims.open(params.account_id ?? '', params.token ?? '');
        if (!account) return notFound(ctx);
        const email = readEmail(ctx, rawBody ?? Buffer.alloc(0));
        if (!account.claimed && (email.length > 254 || !EMAIL.test(email))) {
          return page(ctx, 400, 'Claim your account', form(account.accountId, 'Enter a valid email address.', email.slice(0, 254)));
        }
        claimed(ctx, await claims.claim(account.accountId, email.toLowerCase()));
      },
    },
  ];
}
