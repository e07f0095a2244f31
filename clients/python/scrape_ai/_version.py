"""The package version, sent in the User-Agent header as ``scrape-ai-python/<version>``."""

__version__ = "0.1.0"
