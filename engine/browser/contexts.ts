/** A browser context with its one page, as the pool hands them out, keeps them waiting or makes them ahead. */
import type { BrowserContext, Page } from 'playwright-core';

export interface Made<P> {
  context: BrowserContext;
  page: Page;
  /** What the request's `prepare` made of the fresh page (the request gate, say). */
  prepared: P;
}

export type Prepare<P> = (page: Page) => Promise<P>;

/** A page in `context` and its set-up; the context is closed again when either fails. */
export async function makePage<P>(context: BrowserContext, prepare: Prepare<P> | undefined): Promise<Made<P>> {
  try {
    const page = await context.newPage();
    return { context, page, prepared: prepare ? await prepare(page) : (undefined as P) };
  } catch (error) {
    await context.close().catch(() => undefined);
    throw error;
  }
}
