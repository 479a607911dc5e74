"""The hosts benchmark's Scrapy run: fetch every URL of a list, in the list's order, one
request per host at a time; the gap and total concurrency come as settings. One line per
page.

scrapy runspider scrapy_list.py -a urls=FILE -s DOWNLOAD_DELAY=0.25 \
    -s CONCURRENT_REQUESTS=256 -o pages.jsonl
"""
import scrapy


class Hosts(scrapy.Spider):
    name = "hosts"
    custom_settings = {
        "ROBOTSTXT_OBEY": False,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
        "DOWNLOAD_DELAY_JITTER": 0,
        "RANDOMIZE_DOWNLOAD_DELAY": False,
        "AUTOTHROTTLE_ENABLED": False,
        "COOKIES_ENABLED": False,
        "TELNETCONSOLE_ENABLED": False,
        "LOG_LEVEL": "WARNING",
        "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7",
    }

    def __init__(self, urls, *a, **kw):
        super().__init__(*a, **kw)
        self.urls_file = urls

    def requests(self):
        with open(self.urls_file) as f:
            for line in f:
                url = line.strip()
                if url:
                    yield scrapy.Request(url, callback=self.parse, dont_filter=True)

    async def start(self):
        # Scrapy 2.13 and later.
        for request in self.requests():
            yield request

    def start_requests(self):
        # Scrapy before 2.13.
        yield from self.requests()

    def parse(self, response):
        yield {"url": response.url, "status": response.status}
