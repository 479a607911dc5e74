"""The Scrapy side of scripts/bench/run: crawl the whole bench site from /, follow every
same-site link, keep each page's URL and title (one JSON line per page)."""
import scrapy
from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import CrawlSpider, Rule


class BenchSpider(CrawlSpider):
    name = "bench"
    rules = (Rule(LinkExtractor(), callback="parse_page", follow=True),)

    def __init__(self, base=None, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.start_urls = [base]
        self.allowed_domains = ["127.0.0.1"]

    def parse_start_url(self, response):
        return self.parse_page(response)

    def parse_page(self, response):
        yield {"url": response.url, "title": response.css("title::text").get()}
