/**
 * The baseline of bench/render.ts: one Playwright Chromium driven by a bare Node process (no loader, no
 * service code), a fresh context per page, `concurrency` pages at a time; what a single-process
 * renderer costs. Plain JavaScript so that its Node is what such a renderer's would be.
 *
 *   node bench/playwright-baseline.mjs '{"executablePath": "...", "urls": [...], "concurrency": 2, "viewport": {...}}'
 *
 * Prints `done <ok> <seconds>` when every page was rendered, then exits.
 */
import process from 'node:process';
import { performance } from 'node:perf_hooks';
import { chromium } from 'playwright-core';

async function main() {
  const { executablePath, urls, concurrency, viewport } = JSON.parse(process.argv[2]);
  const browser = await chromium.launch({ executablePath });
  const started = performance.now();
  const queue = [...urls];
  let ok = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let url = queue.shift(); url !== undefined; url = queue.shift()) {
        const context = await browser.newContext({ viewport });
        try {
          const page = await context.newPage();
          await page.goto(url, { waitUntil: 'load' });
          if ((await page.content()).length > 0) ok++;
        } finally {
          await context.close();
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await browser.close();
  process.stdout.write(`done ${ok} ${seconds.toFixed(2)}\n`);
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
