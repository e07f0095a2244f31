"""Errors raised by the scrape-ai client.

Every error answer of the service has the body ``{"error": "<text>", "code": "<code>", "details": [...]}``
(docs/errors.md in the service's repository). The client raises one :class:`ScrapeAIError` subclass per
answer, chosen by ``code`` first and by the HTTP status when the code is unknown (a newer service, or a
proxy in between that answered itself):

==========================  ======================================================================
class                       raised for
==========================  ======================================================================
AuthenticationError         401 (``unauthorized``, ``invalid_credentials``); no API key configured
ForbiddenError              403 (``plan_required``, ``plan_unknown``)
NotFoundError               404 (``not_found``)
ConflictError               409 (``job_not_finished``: results of an unfinished job)
ValidationError             400 and 422 (``invalid_request``, ``invalid_config``, ``invalid_url``,
                            ``target_forbidden``, ``target_unreachable``, ...), with ``details``
QuotaExceededError          429 ``quota_exceeded`` (the month's credits or scrapes are spent)
RateLimitError              429 ``rate_limited`` (hourly limit, a tool's daily allowance, throttles),
                            with ``retry_after`` in seconds
ServerError                 5xx (``internal_error``, ``queue_unavailable``, ``service_busy``)
NetworkError                no HTTP answer at all: refused, reset, DNS, TLS, time-out
JobTimeoutError             :meth:`Client.wait_for_completion` ran out of time (also a
                            built-in :class:`TimeoutError`)
JobFailedError              ``generate(..., run=True)``: the generate job or its run ended ``failed``,
                            or the run could not start (``code`` from the job's message)
==========================  ======================================================================
"""

from __future__ import annotations

import builtins
from typing import Any, Dict, List, Mapping, Optional, Type

__all__ = [
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
    "error_from_response",
]


class ScrapeAIError(Exception):
    """Base class of every error the client raises.

    Attributes:
        message: the service's human-readable ``error`` text (or the client's own text).
        status: the HTTP status code, ``None`` when there was no HTTP answer.
        code: the service's machine-readable ``code`` (``"not_found"``, ``"plan_required"``, ...), ``None``
            when the answer had none or there was no answer.
        details: the ``details`` list of the error body (its shape per code is in docs/errors.md), ``[]``
            when absent.
        retry_after: seconds the service asked to wait (``Retry-After`` header), ``None`` when not given.
        request_id: the ``x-request-id`` header of the answer, ``None`` when absent.
        body: the parsed error body (a dict) or its raw text when it was not JSON; ``None`` without an answer.
    """

    def __init__(
        self,
        message: str,
        status: Optional[int] = None,
        code: Optional[str] = None,
        details: Optional[List[Any]] = None,
        retry_after: Optional[float] = None,
        request_id: Optional[str] = None,
        body: Any = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.details: List[Any] = list(details) if details else []
        self.retry_after = retry_after
        self.request_id = request_id
        self.body = body

    def __str__(self) -> str:
        prefix = []
        if self.status is not None:
            prefix.append(str(self.status))
        if self.code:
            prefix.append(self.code)
        return f"[{' '.join(prefix)}] {self.message}" if prefix else self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}(message={self.message!r}, status={self.status!r}, code={self.code!r}, details={self.details!r})"


class AuthenticationError(ScrapeAIError):
    """401: a missing, malformed, unknown or replaced API key (``unauthorized``), or a login with a wrong
    email or password (``invalid_credentials``). Also raised before any request when the client has no API
    key at all (``status`` is then ``None``)."""


class ForbiddenError(ScrapeAIError):
    """403: the account's plan lacks what the call needs (``plan_required``: server execution for
    :meth:`Client.run` on the Free and Starter plans; details ``[{plan, required, plans_with_it}]``), or
    the plan is unknown to the service (``plan_unknown``)."""


class NotFoundError(ScrapeAIError):
    """404 ``not_found``: no such config or job (or another account's), or an id that is not a UUID."""


class ConflictError(ScrapeAIError):
    """409 ``job_not_finished``: the results of a job that is still pending or running; details
    ``[{status, progress}]``. Wait with :meth:`Client.wait_for_completion` first."""


class ValidationError(ScrapeAIError):
    """400 or 422: the request was refused as given. ``details`` says why: for ``invalid_config`` a list of
    ``{path, line, column, message}`` (the YAML problems, at most 50), for ``invalid_request``
    ``{path, message}``, for ``invalid_url``/``target_forbidden`` ``{url}``, for ``target_unreachable``
    (422, a tool's target could not be reached) ``{url, reason}``."""


class QuotaExceededError(ScrapeAIError):
    """429 ``quota_exceeded``: the month's credits (or scrapes, or generations) are spent; details
    ``[{unit, remaining, limit, cost, resets_at}]``. Never retried: waiting seconds does not help."""


class RateLimitError(ScrapeAIError):
    """429 ``rate_limited``: the plan's hourly call limit, a tool's daily allowance or a throttle on refused
    calls holds. ``retry_after`` is the number of seconds to wait (the ``Retry-After`` header, else
    ``details[0].retry_after_seconds``); details ``[{limit, window, retry_after_seconds, reason?}]``."""


class ServerError(ScrapeAIError):
    """5xx: ``internal_error`` (a bug; the message carries the request id), ``queue_unavailable`` or
    ``service_busy`` (503, try later), or a 5xx from something in front of the service."""


class NetworkError(ScrapeAIError):
    """No HTTP answer: the connection was refused or reset, the name did not resolve, TLS failed, or the
    request timed out (``Client(timeout=...)``). Raised after the client's retries for idempotent calls.
    ``__cause__`` is the underlying exception."""


class JobTimeoutError(ScrapeAIError, builtins.TimeoutError):
    """:meth:`Client.wait_for_completion` reached its ``timeout`` before the job finished. ``job`` is the
    last state seen (a :class:`scrape_ai.Job`); the job itself keeps running on the service. Also an
    instance of the built-in :class:`TimeoutError`."""

    def __init__(self, message: str, job: Any = None) -> None:
        super().__init__(message)
        self.job = job


class JobFailedError(ScrapeAIError):
    """A job the client waited for on the caller's behalf (``Client.generate(..., run=True)``) ended ``failed``, or the
    generate job's run could not start. ``job`` is that job (a :class:`scrape_ai.Job`); ``code`` is the code its
    message starts with (``target_failed``, ``generation_failed``, ``quota_exceeded``, ...), ``None`` without one."""

    def __init__(self, message: str, job: Any = None, code: Optional[str] = None) -> None:
        super().__init__(message, code=code)
        self.job = job


_BY_CODE: Dict[str, Type[ScrapeAIError]] = {
    "unauthorized": AuthenticationError,
    "invalid_credentials": AuthenticationError,
    "plan_required": ForbiddenError,
    "plan_unknown": ForbiddenError,
    "not_found": NotFoundError,
    "job_not_finished": ConflictError,
    "quota_exceeded": QuotaExceededError,
    "rate_limited": RateLimitError,
    "invalid_request": ValidationError,
    "invalid_json": ValidationError,
    "invalid_config": ValidationError,
    "invalid_url": ValidationError,
    "invalid_cursor": ValidationError,
    "browser_required": ValidationError,
    "target_forbidden": ValidationError,
    "target_unreachable": ValidationError,
    "blocked": ValidationError,
    "internal_error": ServerError,
    "queue_unavailable": ServerError,
    "service_busy": ServerError,
}


def _class_for_status(status: int) -> Type[ScrapeAIError]:
    if status == 401:
        return AuthenticationError
    if status == 403:
        return ForbiddenError
    if status == 404:
        return NotFoundError
    if status == 409:
        return ConflictError
    if status in (400, 422):
        return ValidationError
    if status == 429:
        # A 429 without a code (a proxy's, an API Gateway throttle): too many requests, not a spent quota.
        return RateLimitError
    if status >= 500:
        return ServerError
    return ScrapeAIError


def error_from_response(
    status: int,
    body: Any,
    retry_after: Optional[float] = None,
    request_id: Optional[str] = None,
) -> ScrapeAIError:
    """Builds the error for one non-2xx answer.

    Args:
        status: the HTTP status code.
        body: the parsed JSON body (normally ``{error, code, details}``), or its text, or ``None``.
        retry_after: the ``Retry-After`` header in seconds, if any.
        request_id: the ``x-request-id`` header, if any.

    Returns:
        The :class:`ScrapeAIError` subclass for the body's ``code`` (see the module's table), else for the
        status. A :class:`RateLimitError` without a ``Retry-After`` header takes ``retry_after`` from
        ``details[0].retry_after_seconds``.
    """
    code: Optional[str] = None
    details: List[Any] = []
    message = ""
    if isinstance(body, Mapping):
        raw_code = body.get("code")
        code = raw_code if isinstance(raw_code, str) else None
        raw_details = body.get("details")
        details = list(raw_details) if isinstance(raw_details, list) else []
        raw_message = body.get("error")
        if isinstance(raw_message, str):
            message = raw_message
    elif isinstance(body, str) and body.strip():
        message = body.strip()[:500]
    if not message:
        message = f"HTTP {status}"
    cls = _BY_CODE.get(code or "") or _class_for_status(status)
    if cls is RateLimitError and retry_after is None and details and isinstance(details[0], Mapping):
        seconds = details[0].get("retry_after_seconds")
        if isinstance(seconds, (int, float)) and not isinstance(seconds, bool):
            retry_after = float(seconds)
    return cls(message, status=status, code=code, details=details, retry_after=retry_after, request_id=request_id, body=body)
