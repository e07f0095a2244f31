"""scrape-ai: the Python client of the scrape-ai HTTP API (standard library only).

    >>> from scrape_ai import Client
    >>> client = Client()                      # SAI_API_KEY, SAI_BASE_URL
    >>> rows = client.generate("https://quotes.toscrape.com/", "quotes with their authors", run=True)
    >>> rows.config_id, len(rows)              # every row of a run of the saved config

    Without ``run=True``, ``generate`` returns the pending generate job, whose rows are a trial of the first pages.

Configs, generate and run jobs, results, tools, schedules (``create_schedule``) and webhooks (``create_webhook``):
see README.md for the whole interface, the errors and the retry rules.
"""

from ._version import __version__
from .client import DEFAULT_BASE_URL, USER_AGENT, WEBHOOK_EVENTS, Client, ProgressCallback
from .errors import (
    AuthenticationError,
    ConflictError,
    ForbiddenError,
    JobFailedError,
    JobTimeoutError,
    NetworkError,
    NotFoundError,
    QuotaExceededError,
    RateLimitError,
    ScrapeAIError,
    ServerError,
    ValidationError,
)
from .models import FINISHED_STATES, RUNNING_STATES, GeneratedRows, Job

__all__ = [
    "__version__",
    "Client",
    "Job",
    "GeneratedRows",
    "ProgressCallback",
    "DEFAULT_BASE_URL",
    "USER_AGENT",
    "WEBHOOK_EVENTS",
    "FINISHED_STATES",
    "RUNNING_STATES",
    "ScrapeAIError",
    "AuthenticationError",
    "ForbiddenError",
    "NotFoundError",
    "ConflictError",
    "ValidationError",
    "QuotaExceededError",
    "RateLimitError",
    "ServerError",
    "NetworkError",
    "JobTimeoutError",
    "JobFailedError",
]
