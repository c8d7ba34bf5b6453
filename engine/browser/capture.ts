/**
 * Pictures of the page: above the fold, the whole page, or one element, as PNG or JPEG; and the page
 * as PDF. A full page or element taller than `maxHeight` CSS pixels (or wider than `MAX_WIDTH`) is cut
 * to that size from its top-left corner, so an endless page cannot produce an endless image.
 */
import type { Page } from 'playwright-core';
import { stopWith, type Screenshot, type ScreenshotRequest } from './types';

/** Widest picture, in CSS pixels (4K). */
export const MAX_WIDTH = 3_840;

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/**
 * `selectorWaitMs` bounds the wait for `screenshot_selector`'s element: the page has settled by then,
 * so an element still missing after an action's wait is reported as such (RESP001), not held until
 * the render's deadline (CTX0002).
 */
export async function takeScreenshot(page: Page, request: ScreenshotRequest, maxHeight: number, timeoutMs: number, selectorWaitMs = timeoutMs): Promise<Screenshot> {
  const base = { type: request.format, timeout: timeoutMs, ...(request.format === 'jpeg' && request.quality ? { quality: request.quality } : {}) };
  const contentType = request.format === 'png' ? ('image/png' as const) : ('image/jpeg' as const);
  if (request.area === 'viewport') return { data: await page.screenshot(base), contentType, clipped: false };

  let box: Box;
  if (request.area === 'fullpage') {
    box = await page.evaluate<Box>(`(() => {
      const root = document.documentElement, body = document.body;
      return {
        x: 0,
        y: 0,
        width: Math.max(root.scrollWidth, body ? body.scrollWidth : 0, window.innerWidth),
        height: Math.max(root.scrollHeight, body ? body.scrollHeight : 0, window.innerHeight),
      };
    })()`);
  } else {
    const element = page.locator(request.selector ?? '').first();
    try {
      await element.waitFor({ state: 'visible', timeout: Math.min(timeoutMs, selectorWaitMs) });
    } catch {
      throw stopWith('selector_not_found', `screenshot_selector matched no visible element: ${request.selector ?? ''}`);
    }
    const rect = await element.boundingBox({ timeout: timeoutMs });
    const scroll = await page.evaluate<{ x: number; y: number }>('({ x: window.scrollX, y: window.scrollY })');
    const found: Box = rect ? { x: rect.x + scroll.x, y: rect.y + scroll.y, width: rect.width, height: rect.height } : { x: 0, y: 0, width: 0, height: 0 };
    if (found.width < 1 || found.height < 1) throw stopWith('selector_not_found', `screenshot_selector matched an empty element: ${request.selector ?? ''}`);
    box = found;
  }
  const clipped = box.height > maxHeight || box.width > MAX_WIDTH;
  const clip = { x: box.x, y: box.y, width: Math.min(box.width, MAX_WIDTH), height: Math.min(box.height, maxHeight) };
  // `fullPage` makes `clip` page coordinates: the clip may reach below the viewport.
  return { data: await page.screenshot({ ...base, fullPage: true, clip }), contentType, clipped };
}

export async function renderPdf(page: Page): Promise<Buffer> {
  await page.emulateMedia({ media: 'print' });
  return page.pdf({ format: 'A4', printBackground: true, preferCSSPageSize: true });
}
