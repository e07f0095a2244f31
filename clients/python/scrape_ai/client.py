"""The scrape-ai HTTP client (standard library only: urllib.request, json).

One :class:`Client` per API key. Every method is one call of the service's ``/api/v1/`` interface
(docs/spec.md "Endpoints"; docs/api.md), except :meth:`Client.wait_for_completion` (polls) and
:meth:`Client.list_jobs` (follows the job list's cursor).

Retries (:class:`Client` ``max_retries``): idempotent calls only (GET, PUT and DELETE: reads, polls, list pages,
a schedule's update, deletes) are retried on a network error, a 5xx answer and 429 ``rate_limited``; never a POST
(login, configs, generate, run, tools, schedules, webhooks), which could start work, spend credits or create a
thing twice. The wait before retry ``n``
(0-based) is ``Retry-After`` when the answer has one (plus up to ``backoff_base`` seconds of jitter), else a
random time between half and all of ``min(backoff_max, backoff_base * 2**n)`` ("equal jitter"). An answer
whose ``Retry-After`` is longer than ``max_retry_wait`` is not retried: its error is raised at once with
``retry_after`` set, so a program is never put to sleep for an hour without knowing.
"""

from __future__ import annotations

import email.utils
import json
import os
import random
import re
import socket
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
from http.client import HTTPException
from typing import Any, Callable, Dict, Iterable, Iterator, List, Literal, Mapping, Optional, Sequence, Tuple, Union, overload

from ._version import __version__
from .errors import (
    AuthenticationError,
    NetworkError,
    JobFailedError,
    JobTimeoutError,
    RateLimitError,
    ScrapeAIError,
    ServerError,
    NotFoundError,
    ValidationError,
    error_from_response,
)
from .models import GeneratedRows, Job

__all__ = ["Client", "DEFAULT_BASE_URL", "USER_AGENT", "WEBHOOK_EVENTS"]

#: Base URL used when neither ``base_url`` nor ``SAI_BASE_URL`` is given: the local service's default address.
DEFAULT_BASE_URL = "http://127.0.0.1:8787"

#: The User-Agent header of every request.
USER_AGENT = f"scrape-ai-python/{__version__}"

#: The events a webhook can subscribe to (:meth:`Client.create_webhook`): a job ended ``completed`` or ``failed``;
#: a completed run of a saved config changed something since the config's previous run.
WEBHOOK_EVENTS = ("job.completed", "job.failed", "job.changed")

#: Methods whose repetition has the same effect as one call (RFC 9110, section 9.2.2): the only ones retried.
_IDEMPOTENT = frozenset({"GET", "HEAD", "DELETE", "PUT", "OPTIONS"})

_TOOL_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")

#: ``on_progress`` callbacks of :meth:`Client.wait_for_completion`.
ProgressCallback = Callable[[Job], Any]


def _code_of(message: Optional[str]) -> Optional[str]:
    """The error code a failed job's message starts with (``target_failed: ...``), ``None`` without one."""
    match = re.match(r"^([a-z][a-z_]*): ", message or "")
    return match.group(1) if match else None


def _parse_retry_after(value: Optional[str]) -> Optional[float]:
    """``Retry-After`` (RFC 9110, section 10.2.3: delay-seconds or an HTTP-date) in seconds, ``None`` when
    absent or unreadable; never negative."""
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


class _Response:
    """One HTTP answer: status, headers (lower-case names) and body bytes."""

    __slots__ = ("status", "headers", "body")

    def __init__(self, status: int, headers: Dict[str, str], body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";")[0].strip().lower()

    def parsed(self) -> Any:
        """The body as JSON when the Content-Type says JSON (``None`` for an empty body), else the bytes."""
        if not self.body:
            return None
        if self.content_type == "application/json" or self.content_type.endswith("+json"):
            return json.loads(self.body.decode("utf-8"))
        return self.body


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """The API never redirects; a redirect (a proxy, a wrong base URL) is returned as an error answer, not
    followed with the API key."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
        return None


class Client:
    """A client of one scrape-ai service, with one API key.

    Args:
        api_key: the account's key (``sai_...``); default: the ``SAI_API_KEY`` environment variable. May be
            ``None``: calls that need a key then raise :class:`AuthenticationError` before sending anything.
        base_url: the service's address, e.g. ``http://127.0.0.1:8787`` or an API Gateway stage URL; a
            trailing ``/`` or ``/api/v1`` is accepted. Default: ``SAI_BASE_URL``, else ``http://127.0.0.1:8787``.
        timeout: seconds for one HTTP request (connect and each read); a request that takes longer is a
            :class:`NetworkError` (retried when idempotent). Default 60: a tool call may take 25 s.
        max_retries: retries of an idempotent call (GET, PUT, DELETE) after a network error, a 5xx or 429
            ``rate_limited``; 0 turns retries off. Default 3.
        backoff_base: seconds of the first back-off step; each retry doubles it. Default 0.5.
        backoff_max: longest back-off step, seconds. Default 30.
        max_retry_wait: longest ``Retry-After`` the client waits before retrying; a longer one raises the
            error at once (with ``retry_after`` set). Default 60.

    Raises:
        ValueError: for a base URL that is not ``http://`` or ``https://``, or a negative ``max_retries``.
    """

    def __init__(
        self,
        api_key: Optional[str] = None,
        base_url: Optional[str] = None,
        *,
        timeout: float = 60.0,
        max_retries: int = 3,
        backoff_base: float = 0.5,
        backoff_max: float = 30.0,
        max_retry_wait: float = 60.0,
    ) -> None:
        key = api_key if api_key is not None else os.environ.get("SAI_API_KEY")
        self.api_key: Optional[str] = key.strip() if key and key.strip() else None
        self.base_url: str = self._normalise_base_url(base_url if base_url is not None else os.environ.get("SAI_BASE_URL") or DEFAULT_BASE_URL)
        if max_retries < 0:
            raise ValueError("max_retries must be 0 or more")
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.backoff_base = float(backoff_base)
        self.backoff_max = float(backoff_max)
        self.max_retry_wait = float(max_retry_wait)
        self._opener = urllib.request.build_opener(_NoRedirect())

    @staticmethod
    def _normalise_base_url(url: str) -> str:
        url = url.strip().rstrip("/")
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"base_url must be an http:// or https:// URL, got {url!r}")
        if url.endswith("/api/v1"):
            url = url[: -len("/api/v1")]
        return url

    def __repr__(self) -> str:
        return f"Client(base_url={self.base_url!r}, api_key={'sai_…' if self.api_key else None})"

    # ----------------------------------------------------------------------------------------------- login

    @classmethod
    def login(cls, email: str, password: str, base_url: Optional[str] = None, **options: Any) -> "Client":
        """Exchanges an account's email and password for its API key (``POST /api/v1/auth/login/``; the key is
        generated at the first login when the account has none).

        Args:
            email: the account's email.
            password: its password.
            base_url: as for :class:`Client`.
            **options: other :class:`Client` options (``timeout``, ``max_retries``, ...).

        Returns:
            A :class:`Client` with the key. ``client.account`` holds the login answer ``{api_key, email, plan}``.

        Raises:
            AuthenticationError: wrong email or password (401 ``invalid_credentials``; the same for both).
            RateLimitError: too many failed logins for the email or from the address (``reason:
                failed_logins``). Never retried (a POST).
        """
        anonymous = cls(api_key="", base_url=base_url, **options)
        result = anonymous._request("POST", "auth/login/", body={"email": email, "password": password}, auth=False)
        if not isinstance(result, Mapping) or not isinstance(result.get("api_key"), str):
            raise ScrapeAIError("The login answer has no api_key", status=200, body=result)
        client = cls(api_key=result["api_key"], base_url=anonymous.base_url, **options)
        client.account = dict(result)
        return client

    #: The login answer ``{api_key, email, plan}`` of a client made by :meth:`login`, else ``None``.
    account: Optional[Dict[str, Any]] = None

    # --------------------------------------------------------------------------------------------- account

    def me(self) -> Dict[str, Any]:
        """The account and its subscription (``GET /api/v1/me/``).

        Returns:
            ``{"user": {id, email, first_name, last_name}, "subscription": {plan, has_api_access,
            has_server_execution, ...}}``; the subscription has ``credits_remaining`` and
            ``credits_per_month`` (credits billing) or ``yaml_generations_remaining`` and
            ``monthly_scrapes_remaining`` (scrapes billing).

        Raises:
            AuthenticationError: no key or a bad key. ForbiddenError: ``plan_unknown``.
        """
        return self._json("GET", "me/")

    # --------------------------------------------------------------------------------------------- configs

    def list_configs(self) -> List[Dict[str, Any]]:
        """The account's configs, newest first (``GET /api/v1/configs/``).

        Returns:
            The list's ``results``: ``[{id, name, target_url, created_at}]`` (no YAML: :meth:`get_config`).
        """
        body = self._json("GET", "configs/")
        results = body.get("results")
        return list(results) if isinstance(results, list) else []

    def get_config(self, id: str) -> Dict[str, Any]:
        """One config with its YAML (``GET /api/v1/configs/{id}/``).

        Returns:
            ``{id, name, target_url, yaml_content, prompt, created_at}``.

        Raises:
            NotFoundError: no such config, another account's, or an id that is not a UUID.
        """
        return self._json("GET", f"configs/{self._segment(id)}/")

    def create_config(self, name: str, target_url: str, yaml_content: str, prompt: Optional[str] = None) -> Dict[str, Any]:
        """Stores a config (``POST /api/v1/configs/``, 201).

        Args:
            name: 1-200 characters, not blank.
            target_url: an http(s) URL.
            yaml_content: the config in the YAML config language (docs/config-language.md); validated.
            prompt: optional text kept with the config (at most 10,000 characters).

        Returns:
            The stored config ``{id, name, target_url, yaml_content, prompt, created_at}``.

        Raises:
            ValidationError: ``invalid_config`` with details ``[{path, line, column, message}]`` for a YAML
                problem, ``invalid_request`` with ``[{path, message}]`` for a bad field.
        """
        body: Dict[str, Any] = {"name": name, "target_url": target_url, "yaml_content": yaml_content}
        if prompt is not None:
            body["prompt"] = prompt
        return self._json("POST", "configs/", body=body)

    def delete_config(self, id: str) -> None:
        """Deletes a config (``DELETE /api/v1/configs/{id}/``, 204). Jobs that ran it keep its YAML.

        A retried delete (after a network error or a 5xx) that finds the config gone counts as done: the
        first attempt may have deleted it.

        Raises:
            NotFoundError: no such config (on the first attempt).
        """
        self._request("DELETE", f"configs/{self._segment(id)}/")

    # ------------------------------------------------------------------------------------------------ jobs

    @overload
    def generate(
        self,
        url: str,
        prompt: str,
        run: Literal[False] = False,
        on_progress: Optional[ProgressCallback] = None,
        interval: float = 2.0,
        timeout: Optional[float] = None,
        config_id: Optional[str] = None,
        example_urls: Optional[Sequence[str]] = None,
    ) -> Job: ...

    @overload
    def generate(
        self,
        url: str,
        prompt: str,
        run: Literal[True],
        on_progress: Optional[ProgressCallback] = None,
        interval: float = 2.0,
        timeout: Optional[float] = None,
        config_id: Optional[str] = None,
        example_urls: Optional[Sequence[str]] = None,
    ) -> GeneratedRows: ...

    def generate(
        self,
        url: str,
        prompt: str,
        run: bool = False,
        on_progress: Optional[ProgressCallback] = None,
        interval: float = 2.0,
        timeout: Optional[float] = None,
        config_id: Optional[str] = None,
        example_urls: Optional[Sequence[str]] = None,
    ) -> Union[Job, GeneratedRows]:
        """Generates a config: the service analyses ``url``, writes a config for ``prompt``, tries it on the first
        pages and saves it (``POST /api/v1/generate/``, 202). Costs one credit (or one YAML generation).

        Without ``run``, returns at once with the pending generate job; wait with :meth:`wait_for_completion`. Its
        rows are a **trial**: the first pages only (at most 2 listing pages, 30 rows). For all the rows, run the saved
        config (``run(config_id=job.yaml_config["id"])``), or pass ``run=True``.

        With ``run=True`` the service runs the saved config when the generation ends, as a normal, metered run job
        (one more credit, or scrape; needs a plan with server execution), and this waits for both jobs and returns
        every row of the run.

        Args:
            run: run the saved config for all the rows, and wait (docs/generate.md, "All the rows").
            on_progress: with ``run=True``: called with each polled :class:`Job`, the generate job's then the run's.
            interval: with ``run=True``: seconds between polls.
            timeout: with ``run=True``: seconds to wait for both jobs in all; ``None`` waits as long as they take.
            config_id: a saved config of the same URL whose YAML (and prompt) the generated config replaces. Without
                it a new config is saved; when the account has one of the same URL and prompt, the answer (``Job``)
                names it as ``existing_config`` ``{id, name}`` and the new config's name gets a suffix (``" (2)"``).
            example_urls: other pages made from the same template as ``url`` (more listing pages, other searches of
                the site), at most 4 absolute http(s) URLs: the generator reads them to tell the records from the
                template's furniture, and tries the config on them (the finished job's ``status_message`` says so).
                Sent only when given.

        Returns:
            Without ``run``: the new :class:`Job` (``pending``, progress 0); the finished job's ``yaml_config`` is the
            saved config ``{id, yaml_content}``, its ``rows`` the trial's rows. With ``run=True``: a
            :class:`GeneratedRows`, the list of every row of the run, with ``config_id``, ``generate_job`` and
            ``run_job``.

        Raises:
            ValidationError: ``invalid_url``, ``target_forbidden``, ``invalid_request`` (prompt 1-2,000
                characters; a ``config_id`` of another URL; more than 4 ``example_urls``); an ``invalid_url`` or
                ``target_forbidden`` of an example URL starts its message with ``example_urls[i]: ``. NotFoundError: no such ``config_id``. ForbiddenError: ``plan_required`` (``run=True`` on a plan without server execution).
                RateLimitError, QuotaExceededError: the plan's limits (``run=True`` needs room for both costs).
                Never retried (a POST).
            JobFailedError: with ``run=True``, the generation or the run ended ``failed``, or the run could not
                start (``code`` says why, e.g. ``quota_exceeded``); ``err.job`` is that job.
            JobTimeoutError: with ``run=True``, ``timeout`` passed first; the jobs keep going on the service.
        """
        body: Dict[str, Any] = {"url": url, "prompt": prompt}
        if config_id is not None:
            body["config_id"] = config_id
        if example_urls is not None:
            if isinstance(example_urls, str):
                raise TypeError("example_urls is a sequence of URLs, not one string: example_urls=[url]")
            body["example_urls"] = list(example_urls)
        if not run:
            return Job(self._json("POST", "generate/", body=body))
        body["run"] = True
        deadline = None if timeout is None else time.monotonic() + timeout

        def left() -> Optional[float]:
            return None if deadline is None else max(0.0, deadline - time.monotonic())

        started = Job(self._json("POST", "generate/", body=body))
        generated = self.wait_for_completion(started.id, on_progress=on_progress, interval=interval, timeout=left())
        if generated.is_failed:
            raise JobFailedError(generated.status_message or "The generation failed", job=generated, code=_code_of(generated.status_message))
        run_id = generated.get("run_job_id")
        if not run_id:
            why = generated.get("run_error") or "the service started no run (it may predate run=True)"
            raise JobFailedError(f"The config was generated and saved, but its run could not start: {why}", job=generated, code=_code_of(why))
        finished = self.wait_for_completion(run_id, on_progress=on_progress, interval=interval, timeout=left())
        if finished.is_failed:
            raise JobFailedError(finished.status_message or "The run failed", job=finished, code=_code_of(finished.status_message))
        return GeneratedRows(self.get_results(run_id), generate_job=generated, run_job=finished)

    def run(self, config_id: Optional[str] = None, yaml_content: Optional[str] = None) -> Job:
        """Starts a run job on the service's servers (``POST /api/v1/run/``, 202): a stored config
        (``config_id``) or inline YAML (``yaml_content``), exactly one of them. Costs one credit (or scrape).

        Returns:
            The new job (``pending``, progress 0); wait with :meth:`wait_for_completion`, then
            :meth:`get_results`.

        Raises:
            ValueError: both or neither of ``config_id`` and ``yaml_content`` (checked before any request).
            ForbiddenError: 403 ``plan_required``: the plan has no server execution (Free and Starter run
                configs locally, with the CLI's ``sai run --local``).
            ValidationError: ``invalid_config`` with ``[{path, line, column, message}]``.
            NotFoundError: no such config. RateLimitError, QuotaExceededError: the plan's limits.
        """
        if (config_id is None) == (yaml_content is None):
            raise ValueError("run() takes exactly one of config_id and yaml_content")
        body = {"config_id": config_id} if config_id is not None else {"yaml_content": yaml_content}
        return Job(self._json("POST", "run/", body=body))

    def get_job(self, id: str) -> Job:
        """The whole job, as polled (``GET /api/v1/jobs/{id}/status/``): status, progress, status_message,
        counts, ``results`` (``{data: first 100 rows, row_count}``) and ``yaml_config``.

        Raises:
            NotFoundError: no such job, or another account's.
        """
        return Job(self._json("GET", f"jobs/{self._segment(id)}/status/"))

    def iter_jobs(self, page_size: int = 100) -> Iterator[Job]:
        """Every job of the account, newest first, fetched page by page as the iteration goes
        (``GET /api/v1/jobs/?limit=&cursor=``, following ``next_cursor``).

        Args:
            page_size: jobs per request, 1-100.

        Yields:
            Job summaries (``id, status, progress, job_type, target_url, status_message, items_found,
            pages_scraped, api_discovered, created_at, completed_at``; no rows, no YAML).
        """
        cursor: Optional[str] = None
        while True:
            query: Dict[str, str] = {"limit": str(page_size)}
            if cursor:
                query["cursor"] = cursor
            page = self._json("GET", "jobs/", query=query)
            for item in page.get("results") or []:
                yield Job(item)
            cursor = page.get("next_cursor")
            if not cursor:
                return

    def list_jobs(self, limit: Optional[int] = None) -> List[Job]:
        """The account's jobs, newest first, as a list: follows the job list's cursor until ``limit`` jobs
        (``None``: all of them; one request per 100 jobs). For large accounts, iterate :meth:`iter_jobs`.

        Returns:
            Job summaries (no rows, no YAML; :meth:`get_job` has the whole job).
        """
        jobs: List[Job] = []
        if limit is not None and limit <= 0:
            return jobs
        page_size = 100 if limit is None else max(1, min(100, limit))
        for job in self.iter_jobs(page_size=page_size):
            jobs.append(job)
            if limit is not None and len(jobs) >= limit:
                break
        return jobs

    def wait_for_completion(
        self,
        job_id: Union[str, Job],
        on_progress: Optional[ProgressCallback] = None,
        interval: float = 2.0,
        timeout: Optional[float] = None,
    ) -> Job:
        """Polls a job (``GET /api/v1/jobs/{id}/status/``) until it is ``completed`` or ``failed``.

        Args:
            job_id: the job's id, or a :class:`Job`.
            on_progress: called with the :class:`Job` after every poll, the last (finished) one included.
                What it returns is ignored; what it raises propagates (and stops the waiting).
            interval: seconds between polls.
            timeout: seconds to wait in all; ``None`` waits as long as the job takes (the service fails a run
                after 15 minutes).

        Returns:
            The finished job: check ``is_completed`` / ``is_failed`` (a failed job is returned, not raised;
            its ``status_message`` starts with the error code).

        Raises:
            JobTimeoutError: ``timeout`` passed first (``err.job`` is the last state seen); the job keeps
                running on the service. NotFoundError, NetworkError, ...: as :meth:`get_job`.
        """
        job_key = job_id.id if isinstance(job_id, Job) else job_id
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            job = self.get_job(job_key)
            if on_progress is not None:
                on_progress(job)
            if job.is_finished:
                return job
            wait = interval
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise JobTimeoutError(
                        f"Job {job_key} is still {job.status} ({job.progress}%) after {timeout} s",
                        job=job,
                    )
                wait = min(wait, left)
            time.sleep(max(0.0, wait))

    def get_results(self, job_id: Union[str, Job]) -> List[Dict[str, Any]]:
        """Every row of a finished job (``GET /api/v1/jobs/{id}/results/``).

        The endpoint answers ``[{data: [rows], row_count}]``; this returns the rows of every entry, in order.
        A row's keys are the config's field names (plus ``_category``/``_category_url`` with categories, and
        ``_detail_error`` where a detail page failed).

        Returns:
            The rows; ``[]`` for a failed job.

        Raises:
            ConflictError: the job is still pending or running (409 ``job_not_finished``).
            NotFoundError: no such job.
        """
        job_key = job_id.id if isinstance(job_id, Job) else job_id
        entries = self._request("GET", f"jobs/{self._segment(job_key)}/results/")
        rows: List[Dict[str, Any]] = []
        if isinstance(entries, list):
            for entry in entries:
                if isinstance(entry, Mapping) and isinstance(entry.get("data"), list):
                    rows.extend(entry["data"])
        return rows

    def get_changes(
        self,
        job_id: Union[str, Job],
        change: Optional[str] = None,
        offset: int = 0,
        limit: int = 100,
    ) -> Dict[str, Any]:
        """What a completed run of a saved config changed since the config's previous completed run
        (``GET /api/v1/jobs/{id}/changes/``; docs/monitoring.md), one page at a time.

        Args:
            change: ``"added"``, ``"removed"`` or ``"changed"`` to keep one kind; all kinds by default.
            offset: changes to skip (added first, then removed, then changed).
            limit: changes to return, 1 to 1000.

        Returns:
            ``{job_id, compared_with, key_fields, added, removed, changed, total, offset, limit, results, message}``;
            each of ``results`` is ``{change, row}``, and for ``changed`` also ``key`` and ``fields``
            (``{name: {old, new}}``). ``compared_with`` is None when there was nothing to compare with.

        Raises:
            ConflictError: the job is still pending or running (409 ``job_not_finished``).
            NotFoundError: no such job.
            ValidationError: a bad ``change``, ``offset`` or ``limit``.
        """
        job_key = job_id.id if isinstance(job_id, Job) else job_id
        query = {"offset": str(offset), "limit": str(limit)}
        if change is not None:
            query["change"] = change
        return self._request("GET", f"jobs/{self._segment(job_key)}/changes/", query=query)

    # ------------------------------------------------------------------------------------------- schedules

    def create_schedule(
        self,
        config_id: str,
        cron: str,
        timezone: Optional[str] = None,
        enabled: Optional[bool] = None,
    ) -> Dict[str, Any]:
        """Runs a stored config on a cron rule (``POST /api/v1/schedules/``, 201; docs/monitoring.md). Each firing
        is a run job, metered as :meth:`run` is.

        Args:
            config_id: the stored config to run.
            cron: 5 fields, ``minute hour day-of-month month day-of-week`` (``"0 6 * * 1"``), or ``@hourly``,
                ``@daily``, ...
            timezone: the IANA time zone of the cron times (``"Europe/Paris"``); the service's default is ``UTC``.
            enabled: ``False`` creates it without letting it fire; the service's default is ``True``.

        Returns:
            The schedule ``{id, config_id, cron, timezone, enabled, next_run_at, last_fired_at, paused,
            fired_count, skipped_count, recent_jobs, created_at, updated_at}``; ``next_run_at`` is ISO 8601 UTC, or
            ``None`` when it will not fire.

        Raises:
            ForbiddenError: 403 ``plan_required``: the plan has no server execution, or the rule fires more often
                than the plan allows (details ``[{plan, required, min_interval_minutes,
                shortest_interval_minutes, plans_with_it}]``).
            ValidationError: ``invalid_request`` for a bad rule or time zone (details ``[{path, message}]``).
            NotFoundError: no such config. Never retried (a POST).
        """
        body: Dict[str, Any] = {"config_id": config_id, "cron": cron}
        if timezone is not None:
            body["timezone"] = timezone
        if enabled is not None:
            body["enabled"] = bool(enabled)
        return self._json("POST", "schedules/", body=body)

    def list_schedules(self) -> List[Dict[str, Any]]:
        """The account's schedules, newest first (``GET /api/v1/schedules/``).

        Returns:
            The answer's ``schedules`` (each as :meth:`get_schedule` returns it).
        """
        schedules = self._json("GET", "schedules/").get("schedules")
        return list(schedules) if isinstance(schedules, list) else []

    def get_schedule(self, id: str) -> Dict[str, Any]:
        """One schedule (``GET /api/v1/schedules/{id}/``): its rule, next run, counts and the jobs it started.

        Returns:
            As :meth:`create_schedule`; ``paused`` is ``{code, message, at}`` when the service paused it (a firing
            it refused: credits spent, the plan changed, ...; ``enabled`` is then ``False``), else ``None``;
            ``recent_jobs`` is ``[{job_id, scheduled_for}]``, newest first.

        Raises:
            NotFoundError: no such schedule, or another account's.
        """
        return self._json("GET", f"schedules/{self._segment(id)}/")

    def update_schedule(
        self,
        id: str,
        cron: Optional[str] = None,
        timezone: Optional[str] = None,
        enabled: Optional[bool] = None,
    ) -> Dict[str, Any]:
        """Changes a schedule's rule, time zone or ``enabled`` (``PUT /api/v1/schedules/{id}/``); the arguments
        left ``None`` are not changed. ``enabled=True`` also resumes a schedule the service paused.

        Returns:
            The changed schedule, with its new ``next_run_at``.

        Raises:
            ValueError: nothing to change (all three ``None``; checked before any request).
            ValidationError: ``invalid_request`` for a bad rule or time zone.
            ForbiddenError: ``plan_required`` (a rule more often than the plan allows). NotFoundError.
        """
        body: Dict[str, Any] = {}
        if cron is not None:
            body["cron"] = cron
        if timezone is not None:
            body["timezone"] = timezone
        if enabled is not None:
            body["enabled"] = bool(enabled)
        if not body:
            raise ValueError("update_schedule() needs at least one of cron, timezone and enabled")
        return self._json("PUT", f"schedules/{self._segment(id)}/", body=body)

    def delete_schedule(self, id: str) -> None:
        """Deletes a schedule (``DELETE /api/v1/schedules/{id}/``, 204); the jobs it started stay.

        Raises:
            NotFoundError: no such schedule (on the first attempt).
        """
        self._request("DELETE", f"schedules/{self._segment(id)}/")

    # -------------------------------------------------------------------------------------------- webhooks

    def create_webhook(self, url: str, events: Iterable[str]) -> Dict[str, Any]:
        """Registers a URL to be told when the account's jobs end (``POST /api/v1/webhooks/``, 201): signed POSTs
        in the Standard Webhooks format (headers ``webhook-id``, ``webhook-timestamp``, ``webhook-signature``).

        Args:
            url: an ``http`` or ``https`` URL; not a private, loopback or metadata address.
            events: one or more of :data:`WEBHOOK_EVENTS` (``"job.completed"``, ``"job.failed"``,
                ``"job.changed"``); a single string is taken as one event.

        Returns:
            ``{id, url, events, created_at, secret}``: ``secret`` (``whsec_...``) signs the deliveries and is shown
            only in this answer; keep it.

        Raises:
            ValidationError: ``target_forbidden`` (a private, loopback or metadata address), ``invalid_url``,
                ``invalid_request`` (an unknown event, too many webhooks). Never retried (a POST).
        """
        chosen = [events] if isinstance(events, str) else list(events)
        return self._json("POST", "webhooks/", body={"url": url, "events": chosen})

    def list_webhooks(self) -> List[Dict[str, Any]]:
        """The account's webhooks, newest first (``GET /api/v1/webhooks/``).

        Returns:
            The answer's ``webhooks``: ``[{id, url, events, created_at}]`` (no secret).
        """
        webhooks = self._json("GET", "webhooks/").get("webhooks")
        return list(webhooks) if isinstance(webhooks, list) else []

    def get_webhook(self, id: str) -> Dict[str, Any]:
        """One webhook (``GET /api/v1/webhooks/{id}/``): ``{id, url, events, created_at}`` (no secret).

        Raises:
            NotFoundError: no such webhook, or another account's.
        """
        return self._json("GET", f"webhooks/{self._segment(id)}/")

    def delete_webhook(self, id: str) -> None:
        """Deletes a webhook (``DELETE /api/v1/webhooks/{id}/``, 204); messages queued for it are dropped.

        Raises:
            NotFoundError: no such webhook (on the first attempt).
        """
        self._request("DELETE", f"webhooks/{self._segment(id)}/")

    def list_webhook_deliveries(self, id: str, limit: Optional[int] = None) -> List[Dict[str, Any]]:
        """A webhook's delivery attempts, newest first (``GET /api/v1/webhooks/{id}/deliveries/?limit=``).

        Args:
            limit: attempts to return, 1 to 100; the service's default is 50.

        Returns:
            The answer's ``deliveries``: ``[{id, message_id, event, job_id, attempt, attempted_at, status_code,
            duration_ms, error, outcome, next_attempt_at}]``; ``outcome`` is ``"delivered"``, ``"will_retry"``
            (``next_attempt_at`` says when) or ``"given_up"``; ``status_code`` is ``None`` when the receiver did
            not answer. ``message_id`` is the ``webhook-id`` header, the same on every attempt of one message.

        Raises:
            NotFoundError: no such webhook. ValidationError: a ``limit`` outside 1-100.
        """
        query = None if limit is None else {"limit": str(limit)}
        deliveries = self._json("GET", f"webhooks/{self._segment(id)}/deliveries/", query=query).get("deliveries")
        return list(deliveries) if isinstance(deliveries, list) else []

    # ----------------------------------------------------------------------------------------------- tools

    def tool(self, name: str, url: str, accept_json: bool = False, **params: Any) -> Any:
        """Runs a website-analysis tool (``POST /api/v1/tools/<name>/`` with ``{"url": url, **params}``).

        Args:
            name: ``seo-analyzer``, ``tech-detector``, ``lead-generation``, ``screenshot``,
                ``content-extractor``, ``broken-link-checker``, ``dns-whois`` or ``ssl-checker``.
            url: the page to analyse (http or https).
            accept_json: for ``screenshot``: ask for JSON (``Accept: application/json``) instead of the image;
                the service then stores the image and answers ``{url, width, height, format, bytes,
                expires_at}`` (``url`` works for an hour without a key).
            **params: the tool's own options (docs/tools.md), e.g. ``full_page=True, width=1280`` for
                ``screenshot``, ``render=True`` for ``tech-detector``, ``depth=1`` for
                ``broken-link-checker``. ``None`` values are left out.

        Returns:
            The tool's JSON answer as a dict; for ``screenshot`` without ``accept_json``, the image as
            ``bytes`` (PNG unless ``format="jpeg"`` or ``"webp"``). In general: JSON answers are parsed, any
            other content type is returned as bytes.

        Raises:
            ValidationError: ``invalid_request`` (an unknown parameter), ``invalid_url``, ``target_forbidden``,
                422 ``target_unreachable`` (details ``[{url, reason}]``).
            RateLimitError: the hourly limit or the tool's daily allowance (``retry_after``).
            QuotaExceededError: no credits left. Never retried (a POST: each call is metered).
            ValueError: a tool name that is not lower-case letters, digits and hyphens.
        """
        if not _TOOL_NAME.match(name):
            raise ValueError(f"not a tool name: {name!r}")
        body: Dict[str, Any] = {"url": url}
        body.update({k: v for k, v in params.items() if v is not None})
        # Only the screenshot tool answers something else than JSON, and only when JSON is not asked for.
        accept = "image/*" if name == "screenshot" and not accept_json else "application/json"
        return self._request("POST", f"tools/{name}/", body=body, accept=accept)

    # ---------------------------------------------------------------------------------------------- HTTP

    @staticmethod
    def _segment(value: str) -> str:
        """A path segment, percent-encoded (an id with ``/`` or ``..`` cannot reach another route)."""
        return urllib.parse.quote(str(value), safe="")

    def _json(self, method: str, path: str, **kwargs: Any) -> Dict[str, Any]:
        """:meth:`_request` for the calls that answer a JSON object; anything else is a :class:`ScrapeAIError`."""
        result = self._request(method, path, **kwargs)
        if result is None:
            return {}
        if not isinstance(result, dict):
            kind = f"{len(result)} bytes of another type" if isinstance(result, bytes) else type(result).__name__
            raise ScrapeAIError(f"Expected a JSON object from {method} /api/v1/{path}, got {kind}", body=result)
        return result

    def _request(
        self,
        method: str,
        path: str,
        body: Any = None,
        query: Optional[Mapping[str, str]] = None,
        auth: bool = True,
        accept: str = "application/json",
    ) -> Any:
        """One API call with the retry rules of the module docstring.

        Returns:
            The parsed JSON answer, ``None`` for an empty one (204), or ``bytes`` for a non-JSON answer.

        Raises:
            ScrapeAIError (a subclass): an error answer, or no answer after the retries.
        """
        if auth and not self.api_key:
            raise AuthenticationError(
                "No API key: pass Client(api_key='sai_...'), set SAI_API_KEY, or use Client.login(email, password)"
            )
        url = f"{self.base_url}/api/v1/{path}"
        if query:
            url += "?" + urllib.parse.urlencode(query)
        headers = {"User-Agent": USER_AGENT, "Accept": accept}
        data: Optional[bytes] = None
        if body is not None:
            data = json.dumps(body, ensure_ascii=False).encode("utf-8")
            headers["Content-Type"] = "application/json"
        if auth:
            headers["Authorization"] = f"Bearer {self.api_key}"
        retryable = method in _IDEMPOTENT
        attempt = 0
        while True:
            try:
                response = self._send(method, url, headers, data)
                if response.status >= 300:  # redirects are not followed (see _NoRedirect)
                    raise error_from_response(
                        response.status,
                        self._error_body(response),
                        retry_after=_parse_retry_after(response.headers.get("retry-after")),
                        request_id=response.headers.get("x-request-id"),
                    )
                try:
                    return response.parsed()
                except (ValueError, UnicodeDecodeError) as err:
                    raise ScrapeAIError(f"The answer to {method} {url} is not valid JSON: {err}", status=response.status) from err
            except ScrapeAIError as err:
                if method == "DELETE" and attempt > 0 and isinstance(err, NotFoundError):
                    return None  # an earlier attempt deleted it
                delay = self._retry_delay(err, attempt) if retryable else None
                if delay is None:
                    raise
                time.sleep(delay)
                attempt += 1

    def _retry_delay(self, err: ScrapeAIError, attempt: int) -> Optional[float]:
        """Seconds to wait before retry ``attempt`` (0-based), ``None`` when the error is final."""
        if attempt >= self.max_retries:
            return None
        if not isinstance(err, (NetworkError, ServerError, RateLimitError)):
            return None
        if err.retry_after is not None:
            if err.retry_after > self.max_retry_wait:
                return None
            return err.retry_after + random.uniform(0, self.backoff_base)
        step = min(self.backoff_max, self.backoff_base * (2 ** attempt))
        return random.uniform(step / 2, step)

    @staticmethod
    def _error_body(response: _Response) -> Any:
        text = response.body.decode("utf-8", errors="replace")
        try:
            return json.loads(text) if text else None
        except ValueError:
            return text

    def _send(self, method: str, url: str, headers: Dict[str, str], data: Optional[bytes]) -> _Response:
        """One HTTP exchange; an error status is returned, not raised. No answer: :class:`NetworkError`."""
        request = urllib.request.Request(url, data=data, headers=headers, method=method)
        try:
            with self._opener.open(request, timeout=self.timeout) as res:
                return _Response(res.status, {k.lower(): v for k, v in res.headers.items()}, res.read())
        except urllib.error.HTTPError as err:
            try:
                payload = err.read()
            except (OSError, HTTPException):
                payload = b""
            finally:
                err.close()
            return _Response(err.code, {k.lower(): v for k, v in (err.headers or {}).items()}, payload)
        except urllib.error.URLError as err:
            raise NetworkError(f"{method} {url} failed: {err.reason}") from err
        except (socket.timeout, TimeoutError) as err:
            raise NetworkError(f"{method} {url} timed out after {self.timeout} s") from err
        except (ConnectionError, HTTPException, ssl.SSLError, OSError) as err:
            raise NetworkError(f"{method} {url} failed: {err}") from err
