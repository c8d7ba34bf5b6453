"""Crawl4AI side of bench/peer-crawl4ai.ts: one AsyncWebCrawler on the given Chromium, the job's pages at
the job's concurrency. Reads a JSON job on stdin's first line, warms the browser with one page, prints
"ready", waits for "go", renders every page and prints one JSON line: seconds, and each page's HTML.
"""
import asyncio
import json
import sys
import time

from crawl4ai import AsyncWebCrawler, BrowserConfig, CacheMode, CrawlerRunConfig
from crawl4ai import browser_manager

JOB = json.loads(sys.stdin.readline())

_build = browser_manager.BrowserManager._build_browser_args


def _on_our_chromium(self):
    # The same Chromium binary as the service's (Debian's headless shell), not a downloaded one.
    args = _build(self)
    args["executable_path"] = JOB["chromium"]
    args.pop("channel", None)
    return args


browser_manager.BrowserManager._build_browser_args = _on_our_chromium


async def main():
    run = CrawlerRunConfig(cache_mode=CacheMode.BYPASS, verbose=False)
    if JOB.get("delay") is not None:
        run = CrawlerRunConfig(cache_mode=CacheMode.BYPASS, verbose=False, delay_before_return_html=JOB["delay"])
    browser = BrowserConfig(headless=True, verbose=False, viewport_width=1920, viewport_height=1080)
    async with AsyncWebCrawler(config=browser) as crawler:
        await crawler.arun(JOB["urls"][0], config=run)
        print("ready", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        gate = asyncio.Semaphore(JOB["concurrency"])
        htmls = {}

        async def one(index, url):
            async with gate:
                result = await crawler.arun(url, config=run)
                # A page its heuristics take for a block is still answered with its HTML.
                htmls[index] = result.html or ""

        started = time.perf_counter()
        await asyncio.gather(*(one(index, url) for index, url in enumerate(JOB["urls"])))
        seconds = time.perf_counter() - started
        print(json.dumps({"seconds": seconds, "htmls": [htmls[i] for i in range(len(JOB["urls"]))]}), flush=True)


asyncio.run(main())
