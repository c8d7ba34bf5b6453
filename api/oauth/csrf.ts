/**
 * The consent form's CSRF token (double submit): the page sets a random value in a `SameSite=Strict`
 * cookie and in a hidden field, and a post is taken only when both came back equal. A page on another
 * site can neither read the field nor make the browser send the cookie with its post.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { AppContext } from '../http/context';

const COOKIE = 'fp_consent';

function cookieOf(ctx: AppContext): string | undefined {
  for (const part of ctx.get('Cookie').split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === COOKIE) return value.join('=');
  }
  return undefined;
}

/** The token for the page being answered: the browser's current one, else a new one set as the cookie. */
export function issueCsrf(ctx: AppContext): string {
  const current = cookieOf(ctx);
  if (current && /^[A-Za-z0-9_-]{32,64}$/.test(current)) return current;
  const token = randomBytes(24).toString('base64url');
  ctx.append('Set-Cookie', `${COOKIE}=${token}; Path=/oauth; HttpOnly; SameSite=Strict${ctx.protocol === 'https' ? '; Secure' : ''}`);
  return token;
}

/** Whether the form's token matches the cookie the page set. */
export function checkCsrf(ctx: AppContext, fromForm: string | undefined): boolean {
  const cookie = cookieOf(ctx);
  if (!cookie || !fromForm || cookie.length !== fromForm.length) return false;
  return timingSafeEqual(Buffer.from(cookie), Buffer.from(fromForm));
}
