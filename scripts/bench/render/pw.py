"""Playwright for Python on the bench's pages: a fresh context per page, images, fonts and
media blocked, waiting for network idle; each page's ten items checked.

Usage: python3 pw.py URLS_FILE TABS CHROMIUM   (prints the number of complete pages)
"""
import asyncio
import re
import sys

from playwright.async_api import async_playwright

urls = open(sys.argv[1]).read().split()
tabs, exe = int(sys.argv[2]), sys.argv[3]
BLOCK = {"image", "font", "media"}


async def main():
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=exe, args=["--no-sandbox"])
        sem = asyncio.Semaphore(tabs)
        done = 0

        async def one(url):
            nonlocal done
            async with sem:
                ctx = await browser.new_context()
                await ctx.route(
                    "**/*",
                    lambda r: r.abort() if r.request.resource_type in BLOCK else r.continue_(),
                )
                page = await ctx.new_page()
                await page.goto(url, wait_until="networkidle")
                html = await page.content()
                i = int(re.search(r"/p/(\d+)\.html", url).group(1))
                if all(f">item {i}-{k} {k * 3} " in html for k in range(10)):
                    done += 1
                await ctx.close()

        await asyncio.gather(*(one(u) for u in urls))
        await browser.close()
        print(done)


asyncio.run(main())
