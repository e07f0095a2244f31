"""A plain Scrapy spider (Debian's python3-scrapy), run with /usr/bin/python3 through CrawlerProcess.

Settings: CONCURRENT_REQUESTS = CONCURRENT_REQUESTS_PER_DOMAIN = concurrency, ROBOTSTXT_OBEY off,
AutoThrottle off, DOWNLOAD_DELAY 0, LOG_LEVEL WARNING, cookies off, telnet console off. The next listing
page gets priority 1 so the frontier keeps growing; detail pages carry the listing's rating in cb_kwargs.
Items are counted and fingerprinted as they are scraped (item_scraped signal), one is kept as the sample;
the fingerprint is the same as Fingerprint in common.ts.

    /usr/bin/python3 bench/contenders/scrapy_spider.py --start URL [--concurrency 8] [--sample-url URL]

Prints one JSON line: {"name","pages","rows","seconds","peak_rss_mb","fingerprint","sample","notes"}.
"""

import argparse
import hashlib
import json
import re
import sys
import time

import scrapy
import twisted
from scrapy import signals
from scrapy.crawler import CrawlerProcess

MASK = (1 << 64) - 1


def text_or_marked(v):
    return v if isinstance(v, str) else "!" + str(v)


def row_key(row):
    """Same as rowKey() in common.ts."""
    p = row.get("price")
    price = f"{p:.2f}" if isinstance(p, float) and not isinstance(p, bool) else "!" + str(p)
    fields = [row.get("url"), row.get("title"), price, row.get("rating"), row.get("upc"), row.get("description")]
    return "\x1f".join(text_or_marked(v) for v in fields)


def parse_price(text):
    return float(re.sub(r"[^0-9.]", "", text or ""))


def peak_rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    raise RuntimeError("no VmHWM in /proc/self/status")


class BooksSpider(scrapy.Spider):
    name = "books"

    def __init__(self, start, **kwargs):
        super().__init__(**kwargs)
        self.start = start

    def start_requests(self):
        yield scrapy.Request(self.start, callback=self.parse_list, priority=1)

    def parse_list(self, response):
        nxt = response.css("li.next a::attr(href)").get()
        if nxt:
            yield response.follow(nxt, callback=self.parse_list, priority=1)
        for pod in response.css("article.product_pod"):
            href = pod.css("h3 a::attr(href)").get()
            cls = pod.css("p.star-rating::attr(class)").get() or ""
            rating = cls.replace("star-rating", "").strip()
            if href:
                yield response.follow(href, callback=self.parse_detail, cb_kwargs={"rating": rating})

    def parse_detail(self, response, rating):
        yield {
            "url": response.url,
            "title": (response.css("h1::text").get() or "").strip(),
            "price": parse_price(response.css("p.price_color::text").get()),
            "rating": rating,
            "upc": response.css("table.table-striped tr:first-child td::text").get(),
            "description": (response.css("#product_description + p::text").get() or "").strip(),
        }


class Tally:
    def __init__(self, sample_url):
        self.sample_url = sample_url
        self.rows = 0
        self.sum = 0
        self.sample = None
        self.t0 = None
        self.t1 = None
        self.t_last = None

    def item_scraped(self, item, response, spider):
        self.rows += 1
        self.t_last = time.perf_counter()
        digest = hashlib.sha256(row_key(item).encode("utf-8")).digest()
        self.sum = (self.sum + int.from_bytes(digest[:8], "big")) & MASK
        if item.get("url") == self.sample_url:
            self.sample = dict(item)

    def spider_closed(self, spider, reason):
        self.t1 = time.perf_counter()
        self.reason = reason


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--start", required=True)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--sample-url", default="")
    args = ap.parse_args()

    settings = {
        "CONCURRENT_REQUESTS": args.concurrency,
        "CONCURRENT_REQUESTS_PER_DOMAIN": args.concurrency,
        "ROBOTSTXT_OBEY": False,
        "AUTOTHROTTLE_ENABLED": False,
        "DOWNLOAD_DELAY": 0,
        "LOG_LEVEL": "WARNING",
        "COOKIES_ENABLED": False,
        "TELNETCONSOLE_ENABLED": False,
        "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7",  # silences 2.7+'s deprecation warning, no other effect
    }
    tally = Tally(args.sample_url)
    process = CrawlerProcess(settings, install_root_handler=True)
    crawler = process.create_crawler(BooksSpider)
    crawler.signals.connect(tally.item_scraped, signal=signals.item_scraped)
    crawler.signals.connect(tally.spider_closed, signal=signals.spider_closed)
    tally.t0 = time.perf_counter()
    process.crawl(crawler, start=args.start)
    process.start()
    t1 = tally.t1 if tally.t1 is not None else time.perf_counter()

    stats = crawler.stats.get_stats()
    pages = stats.get("response_received_count", 0)
    notes = [f"Scrapy {scrapy.__version__}, Twisted {twisted.__version__}, Python {sys.version.split()[0]}"]
    if tally.t_last is not None:
        notes.append(f"last item at {tally.t_last - tally.t0:.3f} s")
    if getattr(tally, "reason", "finished") != "finished":
        notes.append(f"closed: {tally.reason}")
    errors = stats.get("log_count/ERROR", 0)
    if errors:
        notes.append(f"{errors} errors logged")
    print(
        json.dumps(
            {
                "name": "scrapy",
                "pages": pages,
                "rows": tally.rows,
                "seconds": round(t1 - tally.t0, 3),
                "fingerprint": f"{tally.sum:016x}",
                "sample": tally.sample,
                "notes": notes,
                "peak_rss_mb": peak_rss_mb(),
            },
            ensure_ascii=False,
        ),
        flush=True,
    )


if __name__ == "__main__":
    main()
