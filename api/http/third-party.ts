/**
 * Responses that carry a target's content (Fetch answers, stored crawl pages) come from the API's own
 * origin, where the caller's key may sit in the URL. `Content-Security-Policy: sandbox` makes a
 * browser open such a page in an opaque origin with scripts off, so it can neither run nor read
 * anything of ours; `nosniff` keeps a browser from taking a declared text or JSON body for HTML.
 */
export const THIRD_PARTY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': 'sandbox',
  'X-Content-Type-Options': 'nosniff',
};

export function markThirdParty(out: { set(name: string, value: string): void }): void {
  for (const [name, value] of Object.entries(THIRD_PARTY_HEADERS)) out.set(name, value);
}

/** `Content-Disposition` for stored content: a file to save when asked, else shown in place; the name is ours, never the target's. */
export const contentDisposition = (download: boolean, filename: string): string =>
  `${download ? 'attachment' : 'inline'}; filename="${filename.replace(/[^\w.-]/g, '_')}"`;
