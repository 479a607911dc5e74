"""The benchmark's Scrapy crawler: every same-origin <a href> from the start URL, robots.txt
obeyed, no delay, 64 requests in flight, one line per page crawled.

scrapy runspider scrapy_spider.py -a start=http://127.0.0.1:PORT/ -o pages.jsonl
"""
from urllib.parse import urlsplit

import scrapy
from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import CrawlSpider, Rule


class Bench(CrawlSpider):
    name = "bench"
    custom_settings = {
        "ROBOTSTXT_OBEY": True,
        "CONCURRENT_REQUESTS": 64,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 64,
        "DOWNLOAD_DELAY": 0,
        "AUTOTHROTTLE_ENABLED": False,
        "COOKIES_ENABLED": False,
        "TELNETCONSOLE_ENABLED": False,
        "LOG_LEVEL": "WARNING",
        "DEPTH_LIMIT": 0,
        "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7",
    }

    def __init__(self, start, *a, **kw):
        self.start_urls = [start]
        parts = urlsplit(start)
        # The offsite filter compares host names; the link extractor compares host:port.
        self.allowed_domains = [parts.hostname]
        same_origin = LinkExtractor(allow_domains=[parts.netloc])
        self.rules = (Rule(same_origin, callback="parse_page", follow=True),)
        super().__init__(*a, **kw)

    def parse_start_url(self, response):
        return self.parse_page(response)

    def parse_page(self, response):
        yield {"url": response.url}
