"""Tests of the scrape_ai client.

``LiveServiceTest`` runs against the REAL local service over HTTP; test/clients/python.test.ts (run by
``npm test``) starts it with a fixture site and sets the environment:

- ``SAI_BASE_URL``: the service; ``SAI_API_KEY``: a Pro account's key; ``SAI_TEST_EMAIL`` /
  ``SAI_TEST_PASSWORD``: that account's login;
- ``SAI_FREE_API_KEY``: a Free account (no server execution, 10 calls an hour);
- ``SAI_QUOTA_API_KEY``: an account whose month holds one tool call (0.1 credit);
- ``SAI_SITE_URL``: the fixture site (quotes.toscrape.com look-alike under ``/quotes/``);
- ``SAI_EXPECTED_QUOTES``: JSON ``[{text, author}]`` of the fixture's first 30 quotes, from its own data;
- ``SAI_ALL_QUOTES_COUNT``: how many quotes the fixture's listing pages hold in all.

``RetryTest`` runs against a small scripted HTTP server in this process (no service needed): which answers
are retried, how long the client waits, what it sends.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import hmac
import http.server
import json
import os
import socket
import struct
import threading
import time
import unittest
import urllib.request
from typing import Any, Callable, Dict, List, Optional, Tuple

import scrape_ai
from scrape_ai import (
    AuthenticationError,
    Client,
    ConflictError,
    ForbiddenError,
    GeneratedRows,
    Job,
    JobFailedError,
    JobTimeoutError,
    NetworkError,
    NotFoundError,
    QuotaExceededError,
    RateLimitError,
    ScrapeAIError,
    ServerError,
    ValidationError,
    WEBHOOK_EVENTS,
)

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def env(name: str) -> str:
    """A required environment variable; a clear failure when it is missing (tests are never skipped)."""
    value = os.environ.get(name)
    if not value:
        raise AssertionError(
            f"{name} is not set: these tests run against the local service; `node_modules/.bin/node test/run.ts "
            f"test/clients/python.test.ts` starts it and sets SAI_BASE_URL, SAI_API_KEY, SAI_TEST_EMAIL, "
            f"SAI_TEST_PASSWORD, SAI_FREE_API_KEY, SAI_QUOTA_API_KEY, SAI_SITE_URL and SAI_EXPECTED_QUOTES"
        )
    return value


def quotes_yaml(url: str, max_pages: int = 3) -> str:
    """A small config (docs/config-language.md): every quote's text and author, following "Next"."""
    return f"""version: "2.0"
name: Quotes
target:
  url: {url}
  engine: lightweight
extract:
  container: div.quote
  type: list
  fields:
    - {{ name: text, selector: span.text, transform: [strip] }}
    - {{ name: author, selector: small.author, transform: [strip] }}
pagination:
  type: click
  selector: li.next a
  max_pages: {max_pages}
"""


def png_size(image: bytes) -> Tuple[int, int]:
    """Width and height from a PNG's IHDR chunk (PNG spec, section 11.2.2: the first chunk)."""
    assert image[:8] == PNG_SIGNATURE, image[:16]
    assert image[12:16] == b"IHDR", image[8:32]
    width, height = struct.unpack(">II", image[16:24])
    return width, height


class LiveServiceTest(unittest.TestCase):
    """The client against the real local service."""

    client: Client
    site: str
    base_url: str

    @classmethod
    def setUpClass(cls) -> None:
        cls.base_url = env("SAI_BASE_URL")
        cls.site = env("SAI_SITE_URL").rstrip("/")
        cls.client = Client(api_key=env("SAI_API_KEY"), base_url=cls.base_url)

    # ------------------------------------------------------------------------------------ account

    def test_login_returns_a_client_whose_me_works(self) -> None:
        email = env("SAI_TEST_EMAIL")
        client = Client.login(email, env("SAI_TEST_PASSWORD"), base_url=self.base_url)
        self.assertTrue(client.api_key and client.api_key.startswith("sai_"), client.api_key)
        self.assertEqual(client.account and client.account["email"], email)
        me = client.me()
        self.assertEqual(me["user"]["email"], email)
        self.assertEqual(me["subscription"]["plan"], "pro")
        self.assertIs(me["subscription"]["has_server_execution"], True)

    def test_login_with_a_wrong_password_is_an_authentication_error(self) -> None:
        with self.assertRaises(AuthenticationError) as caught:
            Client.login(env("SAI_TEST_EMAIL"), "not the password", base_url=self.base_url)
        self.assertEqual(caught.exception.status, 401)
        self.assertEqual(caught.exception.code, "invalid_credentials")

    def test_defaults_come_from_the_environment(self) -> None:
        client = Client()  # SAI_API_KEY and SAI_BASE_URL
        self.assertEqual(client.base_url, self.base_url.rstrip("/"))
        self.assertEqual(client.me()["subscription"]["plan"], "pro")
        with_prefix = Client(base_url=self.base_url + "/api/v1/")
        self.assertEqual(with_prefix.me()["user"]["email"], env("SAI_TEST_EMAIL"))

    def test_a_bad_key_is_an_authentication_error(self) -> None:
        client = Client(api_key="sai_" + "x" * 40, base_url=self.base_url)
        with self.assertRaises(AuthenticationError) as caught:
            client.me()
        err = caught.exception
        self.assertIsInstance(err, ScrapeAIError)
        self.assertEqual(err.status, 401)
        self.assertEqual(err.code, "unauthorized")
        self.assertTrue(err.message)

    def test_no_key_fails_before_any_request(self) -> None:
        client = Client(api_key="", base_url="http://127.0.0.1:9")  # nothing listens there
        with self.assertRaises(AuthenticationError) as caught:
            client.list_configs()
        self.assertIsNone(caught.exception.status)
        self.assertIn("SAI_API_KEY", str(caught.exception))

    # ------------------------------------------------------------------------------------ configs

    def test_configs_create_list_get_delete(self) -> None:
        yaml_content = quotes_yaml(f"{self.site}/quotes/")
        created = self.client.create_config("Python client quotes", f"{self.site}/quotes/", yaml_content, prompt="quotes and authors")
        self.assertEqual(created["name"], "Python client quotes")
        self.assertEqual(created["yaml_content"], yaml_content)
        self.assertEqual(created["prompt"], "quotes and authors")
        config_id = created["id"]

        listed = self.client.list_configs()
        mine = [c for c in listed if c["id"] == config_id]
        self.assertEqual(len(mine), 1, listed)
        self.assertEqual(mine[0]["target_url"], f"{self.site}/quotes/")
        self.assertNotIn("yaml_content", mine[0], "list items carry no YAML (docs/spec.md)")

        got = self.client.get_config(config_id)
        self.assertEqual(got["yaml_content"], yaml_content)
        self.assertEqual(got["created_at"], created["created_at"])

        self.client.delete_config(config_id)
        with self.assertRaises(NotFoundError) as caught:
            self.client.get_config(config_id)
        self.assertEqual((caught.exception.status, caught.exception.code), (404, "not_found"))
        with self.assertRaises(NotFoundError):
            self.client.delete_config(config_id)
        self.assertNotIn(config_id, [c["id"] for c in self.client.list_configs()])

    def test_an_id_that_is_not_a_uuid_is_not_found_and_stays_in_its_path_segment(self) -> None:
        with self.assertRaises(NotFoundError):
            self.client.get_config("../../me")
        with self.assertRaises(NotFoundError):
            self.client.get_job("no-such-job")

    def test_invalid_yaml_is_a_validation_error_with_line_and_column(self) -> None:
        # Line 5 holds a misspelt key of `extract`: an unknown key is an error (docs/config-language.md).
        yaml_content = 'version: "2.0"\ntarget:\n  url: https://example.com/\nextract:\n  contianer: div.quote\n  fields:\n    - { name: a, selector: b }\n'
        with self.assertRaises(ValidationError) as caught:
            self.client.create_config("bad", "https://example.com/", yaml_content)
        err = caught.exception
        self.assertEqual((err.status, err.code), (400, "invalid_config"))
        self.assertTrue(err.details, "details list the problems")
        problem = next((d for d in err.details if "contianer" in d.get("message", "")), None)
        self.assertIsNotNone(problem, err.details)
        assert problem is not None
        self.assertEqual(problem["line"], 5)
        self.assertIsInstance(problem["column"], int)
        self.assertGreaterEqual(problem["column"], 1)
        self.assertIn("path", problem)

    def test_a_bad_field_is_a_validation_error_naming_it(self) -> None:
        with self.assertRaises(ValidationError) as caught:
            self.client.create_config("", "not a url", quotes_yaml(f"{self.site}/quotes/"))
        self.assertEqual(caught.exception.code, "invalid_request")
        self.assertTrue(any("path" in d for d in caught.exception.details), caught.exception.details)

    # --------------------------------------------------------------------------------------- jobs

    def test_run_waits_with_progress_and_returns_the_fixture_quotes(self) -> None:
        expected: List[Dict[str, str]] = json.loads(env("SAI_EXPECTED_QUOTES"))
        self.assertEqual(len(expected), 30)
        # /slow/150/ delays every page so that several polls see the job at work.
        job = self.client.run(yaml_content=quotes_yaml(f"{self.site}/slow/150/quotes/", max_pages=3))
        self.assertIsInstance(job, Job)
        self.assertEqual((job.status, job.progress, job.job_type), ("pending", 0, "run"))
        self.assertTrue(job.is_running)
        self.assertFalse(job.is_completed or job.is_failed)

        seen: List[Job] = []
        finished = self.client.wait_for_completion(job.id, on_progress=seen.append, interval=0.05, timeout=60)
        self.assertTrue(finished.is_completed, finished.status_message)
        self.assertFalse(finished.is_running or finished.is_failed)
        self.assertEqual(finished.status, "completed")
        self.assertIs(seen[-1], finished, "on_progress sees the finished job too")
        self.assertGreaterEqual(len(seen), 3, [j.progress for j in seen])
        progress = [j.progress for j in seen]
        self.assertEqual(progress, sorted(progress), f"progress never goes down: {progress}")
        self.assertEqual(progress[-1], 100)
        self.assertTrue(any(j.is_running for j in seen[:-1]))
        self.assertEqual(finished.items_found, 30)
        self.assertEqual(finished.pages_scraped, 3)
        self.assertEqual(finished.row_count, 30)
        self.assertIsNotNone(finished.completed_at)
        self.assertEqual(finished["items_found"], finished.raw["items_found"])

        rows = self.client.get_results(job.id)
        changes = self.client.get_changes(job.id, change="added", limit=5)
        self.assertEqual(changes["job_id"], job.id)
        self.assertIn("message", changes)
        self.assertLessEqual(len(changes["results"]), 5)
        with self.assertRaises(ValidationError):
            self.client.get_changes(job.id, limit=0)
        self.assertEqual(len(rows), len(expected))
        self.assertEqual(rows, expected)
        self.assertEqual(rows[0]["author"], expected[0]["author"])
        self.assertEqual(finished.rows, rows, "the status answer's preview holds the 30 rows too")

        ids = [j.id for j in self.client.list_jobs()]
        self.assertIn(job.id, ids)
        self.assertEqual(len(self.client.list_jobs(limit=1)), 1)
        summary = next(j for j in self.client.iter_jobs(page_size=1) if j.id == job.id)
        self.assertTrue(summary.is_completed)
        self.assertIsNone(summary.results, "list items carry no rows")

    def test_run_a_stored_config_results_before_the_end_and_a_wait_that_times_out(self) -> None:
        config = self.client.create_config("slow quotes", f"{self.site}/slow/1500/quotes/", quotes_yaml(f"{self.site}/slow/1500/quotes/", max_pages=1))
        try:
            job = self.client.run(config_id=config["id"])
            with self.assertRaises(ConflictError) as conflict:
                self.client.get_results(job.id)
            self.assertEqual((conflict.exception.status, conflict.exception.code), (409, "job_not_finished"))
            with self.assertRaises(JobTimeoutError) as timeout:
                self.client.wait_for_completion(job, interval=0.05, timeout=0.3)
            self.assertIsInstance(timeout.exception, TimeoutError)
            self.assertIsInstance(timeout.exception, ScrapeAIError)
            self.assertTrue(timeout.exception.job.is_running)
            finished = self.client.wait_for_completion(job, interval=0.1, timeout=60)
            self.assertTrue(finished.is_completed, finished.status_message)
            self.assertEqual(finished.yaml_config and finished.yaml_config["id"], config["id"])
            self.assertEqual(len(self.client.get_results(finished)), 10)
        finally:
            self.client.delete_config(config["id"])

    def test_run_takes_exactly_one_of_config_id_and_yaml(self) -> None:
        with self.assertRaises(ValueError):
            self.client.run()
        with self.assertRaises(ValueError):
            self.client.run(config_id="x", yaml_content="y")

    def test_run_of_invalid_yaml_is_a_validation_error(self) -> None:
        with self.assertRaises(ValidationError) as caught:
            self.client.run(yaml_content="version: '2.0'\ntarget: {url: 'nope'}\n")
        self.assertEqual(caught.exception.code, "invalid_config")

    def test_generate_waited_to_completion(self) -> None:
        url = f"{self.site}/quotes/"
        job = self.client.generate(url, "every quote with its author and tags")
        self.assertEqual((job.status, job.progress, job.job_type, job.target_url), ("pending", 0, "generate", url))
        states: List[str] = []
        progress: List[int] = []

        def on_progress(j: Job) -> None:
            states.append(j.status)
            progress.append(j.progress)

        finished = self.client.wait_for_completion(job.id, on_progress=on_progress, interval=0.1, timeout=90)
        self.assertTrue(finished.is_completed, finished.status_message)
        self.assertEqual(progress, sorted(progress), progress)
        self.assertEqual(progress[-1], 100)
        self.assertTrue(set(states) <= scrape_ai.RUNNING_STATES | {"completed"}, states)
        self.assertIsNotNone(finished.yaml_config)
        assert finished.yaml_config is not None
        saved = self.client.get_config(finished.yaml_config["id"])
        self.assertEqual(saved["yaml_content"], finished.yaml_config["yaml_content"])
        self.assertEqual(saved["prompt"], "every quote with its author and tags")
        rows = self.client.get_results(job.id)
        self.assertGreaterEqual(len(rows), 10)
        self.assertEqual(len(rows), finished.row_count)
        expected_texts = {q["text"] for q in json.loads(env("SAI_EXPECTED_QUOTES"))}
        self.assertTrue(any(v in expected_texts for v in rows[0].values() if isinstance(v, str)), rows[0])

    def test_generate_with_run_waits_for_the_run_and_returns_every_row(self) -> None:
        url = f"{self.site}/quotes/"
        seen: List[Tuple[Optional[str], str]] = []
        rows = self.client.generate(url, "every quote with its author", run=True, on_progress=lambda j: seen.append((j.job_type, j.status)), interval=0.1, timeout=120)
        self.assertIsInstance(rows, GeneratedRows)
        self.assertIsInstance(rows, list)
        self.assertEqual(len(rows), int(env("SAI_ALL_QUOTES_COUNT")), "every row of every page, not the trial's")
        self.assertTrue(rows.generate_job.is_completed)
        self.assertLessEqual(rows.generate_job.row_count or 0, 30, "the generate job's own rows are the trial's")
        self.assertEqual(rows.generate_job["run_job_id"], rows.run_job.id)
        self.assertEqual((rows.run_job.job_type, rows.run_job.status), ("run", "completed"))
        self.assertEqual(rows.run_job.yaml_config and rows.run_job.yaml_config["id"], rows.config_id)
        self.assertEqual(self.client.get_config(rows.config_id or "")["prompt"], "every quote with its author")
        self.assertEqual(seen[-1], ("run", "completed"))
        self.assertIn(("generate", "completed"), seen, "the callback sees the generate job, then the run")

    def test_generate_without_run_says_its_rows_are_a_trial(self) -> None:
        job = self.client.wait_for_completion(self.client.generate(f"{self.site}/quotes/", "quotes and their authors").id, interval=0.1, timeout=90)
        self.assertTrue(job.is_completed, job.status_message)
        self.assertIn("rows are a trial of the first pages only", job.status_message or "")
        self.assertNotIn("run_job_id", job)

    def test_generate_of_the_same_url_and_prompt_names_the_config_and_config_id_replaces_it(self) -> None:
        url, prompt = f"{self.site}/quotes/", "the author of each quote"
        first = self.client.wait_for_completion(self.client.generate(url, prompt).id, interval=0.1, timeout=90)
        self.assertTrue(first.is_completed, first.status_message)
        assert first.yaml_config is not None
        original = self.client.get_config(first.yaml_config["id"])
        again = self.client.generate(url, prompt)
        self.assertEqual(again["existing_config"], {"id": original["id"], "name": original["name"]})
        second = self.client.wait_for_completion(again.id, interval=0.1, timeout=90)
        assert second.yaml_config is not None
        self.assertEqual(self.client.get_config(second.yaml_config["id"])["name"], f"{original['name']} (2)")
        count = len(self.client.list_configs())
        replaced = self.client.wait_for_completion(self.client.generate(url, prompt, config_id=original["id"]).id, interval=0.1, timeout=90)
        self.assertTrue(replaced.is_completed, replaced.status_message)
        assert replaced.yaml_config is not None
        self.assertEqual(replaced.yaml_config["id"], original["id"])
        self.assertEqual(len(self.client.list_configs()), count, "no config added")
        with self.assertRaises(ValidationError) as caught:
            self.client.generate(f"{self.site}/books/", prompt, config_id=original["id"])
        self.assertEqual(caught.exception.code, "invalid_request")

    def test_generate_with_example_urls_reads_and_tries_those_pages_and_refuses_a_forbidden_one(self) -> None:
        url = f"{self.site}/quotes/"
        # Pages 3 and 4, not the next page (2), which the generator reads anyway: 3 other pages in all, 1 without them.
        examples = [f"{self.site}/quotes/page/3/", f"{self.site}/quotes/page/4/"]
        job = self.client.wait_for_completion(self.client.generate(url, "quotes and their authors on this page", example_urls=examples).id, interval=0.1, timeout=90)
        self.assertTrue(job.is_completed, job.status_message)
        self.assertRegex(job.status_message or "", r"tried on 3 other page\(s\) of the template: \d+ row\(s\), \d+ row\(s\), \d+ row\(s\)")
        expected = json.loads(env("SAI_EXPECTED_QUOTES"))
        self.assertEqual(job.rows[0].get("author"), expected[0]["author"], job.rows[:1])

        with self.assertRaises(ValidationError) as forbidden:
            self.client.generate(url, "quotes", example_urls=[examples[0], "http://169.254.169.254/latest/"])
        self.assertEqual((forbidden.exception.status, forbidden.exception.code), (400, "target_forbidden"))
        self.assertTrue(forbidden.exception.message.startswith("example_urls[1]: "), forbidden.exception.message)
        self.assertEqual(forbidden.exception.details[0]["path"], "example_urls/1")
        with self.assertRaises(ValidationError) as too_many:
            self.client.generate(url, "quotes", example_urls=[f"{self.site}/quotes/page/{n}/" for n in range(2, 7)])
        self.assertEqual(too_many.exception.code, "invalid_request")

    def test_generate_with_run_on_the_free_plan_is_plan_required(self) -> None:
        free = Client(api_key=env("SAI_FREE_API_KEY"), base_url=self.base_url)
        with self.assertRaises(ForbiddenError) as caught:
            free.generate(f"{self.site}/quotes/", "quotes", run=True)
        self.assertEqual(caught.exception.code, "plan_required")

    # ---------------------------------------------------------------------------------- schedules

    def test_schedules_create_list_get_disable_enable_change_delete(self) -> None:
        config = self.client.create_config("scheduled quotes", f"{self.site}/quotes/", quotes_yaml(f"{self.site}/quotes/"))
        try:
            # Mondays at 06:00 in Paris: it does not fire during the test.
            created = self.client.create_schedule(config["id"], "0 6 * * 1", timezone="Europe/Paris")
            self.assertEqual(
                (created["config_id"], created["cron"], created["timezone"], created["enabled"], created["paused"], created["last_fired_at"]),
                (config["id"], "0 6 * * 1", "Europe/Paris", True, None, None),
            )
            self.assertEqual((created["fired_count"], created["skipped_count"], created["recent_jobs"]), (0, 0, []))
            next_run = datetime.datetime.fromisoformat(created["next_run_at"].replace("Z", "+00:00"))
            now = datetime.datetime.now(datetime.timezone.utc)
            self.assertTrue(now < next_run <= now + datetime.timedelta(days=7, hours=1), created["next_run_at"])
            # 06:00 in Paris is 04:00 or 05:00 UTC (summer or winter time), on a Monday.
            self.assertEqual((next_run.weekday(), next_run.minute), (0, 0))
            self.assertIn(next_run.hour, (4, 5))

            self.assertIn(created["id"], [s["id"] for s in self.client.list_schedules()])
            self.assertEqual(self.client.get_schedule(created["id"]), created)

            disabled = self.client.update_schedule(created["id"], enabled=False)
            self.assertEqual((disabled["enabled"], disabled["next_run_at"], disabled["cron"]), (False, None, "0 6 * * 1"))
            enabled = self.client.update_schedule(created["id"], enabled=True)
            self.assertEqual((enabled["enabled"], enabled["next_run_at"]), (True, created["next_run_at"]))
            changed = self.client.update_schedule(created["id"], cron="30 7 1 * *", timezone="UTC")
            self.assertEqual((changed["cron"], changed["timezone"]), ("30 7 1 * *", "UTC"))
            self.assertRegex(changed["next_run_at"], r"^\d{4}-\d{2}-01T07:30:00(\.000)?Z$")

            with self.assertRaises(ValidationError) as caught:
                self.client.update_schedule(created["id"], cron="every monday")
            self.assertEqual((caught.exception.status, caught.exception.code), (400, "invalid_request"))
            self.assertIn("cron", [d.get("path") for d in caught.exception.details])
            with self.assertRaises(ValidationError) as caught:
                self.client.create_schedule(config["id"], "0 6 * * *", timezone="Mars/Olympus_Mons")
            self.assertIn("timezone", [d.get("path") for d in caught.exception.details])
            with self.assertRaises(ValueError):
                self.client.update_schedule(created["id"])
            with self.assertRaises(NotFoundError):
                self.client.create_schedule("00000000-0000-4000-8000-000000000000", "0 6 * * *")

            self.client.delete_schedule(created["id"])
            with self.assertRaises(NotFoundError) as caught:
                self.client.get_schedule(created["id"])
            self.assertEqual((caught.exception.status, caught.exception.code), (404, "not_found"))
            with self.assertRaises(NotFoundError):
                self.client.delete_schedule(created["id"])
            self.assertNotIn(created["id"], [s["id"] for s in self.client.list_schedules()])
        finally:
            self.client.delete_config(config["id"])  # and any schedule of it

    def test_schedules_on_the_free_plan_are_plan_required(self) -> None:
        free = Client(api_key=env("SAI_FREE_API_KEY"), base_url=self.base_url)
        config = free.create_config("free quotes", f"{self.site}/quotes/", quotes_yaml(f"{self.site}/quotes/"))
        try:
            with self.assertRaises(ForbiddenError) as caught:
                free.create_schedule(config["id"], "0 6 * * *")
            err = caught.exception
            self.assertEqual((err.status, err.code), (403, "plan_required"))
            self.assertEqual((err.details[0]["plan"], err.details[0]["required"]), ("free", "has_server_execution"))
            self.assertEqual(free.list_schedules(), [])
        finally:
            free.delete_config(config["id"])

    # ----------------------------------------------------------------------------------- webhooks

    def test_webhooks_create_shows_the_secret_once_list_get_deliveries_delete(self) -> None:
        url = f"{self.site}/webhook-receiver"
        created = self.client.create_webhook(url, ["job.completed", "job.failed"])
        try:
            self.assertRegex(created["secret"], r"^whsec_[A-Za-z0-9+/=]{20,}$")
            self.assertEqual((created["url"], created["events"]), (url, ["job.completed", "job.failed"]))
            shown = {k: v for k, v in created.items() if k != "secret"}
            listed = [w for w in self.client.list_webhooks() if w["id"] == created["id"]]
            self.assertEqual(listed, [shown], "listed without the secret")
            self.assertEqual(self.client.get_webhook(created["id"]), shown)
            self.assertEqual(self.client.list_webhook_deliveries(created["id"]), [])
            self.assertEqual(self.client.list_webhook_deliveries(created["id"], limit=5), [])
            with self.assertRaises(ValidationError):
                self.client.list_webhook_deliveries(created["id"], limit=0)
        finally:
            self.client.delete_webhook(created["id"])
        with self.assertRaises(NotFoundError) as caught:
            self.client.get_webhook(created["id"])
        self.assertEqual(caught.exception.code, "not_found")
        with self.assertRaises(NotFoundError):
            self.client.delete_webhook(created["id"])
        self.assertNotIn(created["id"], [w["id"] for w in self.client.list_webhooks()])
        # One event as a plain string.
        one = self.client.create_webhook(url, "job.changed")
        self.assertEqual(one["events"], ["job.changed"])
        self.client.delete_webhook(one["id"])

    def test_a_webhook_to_a_metadata_or_private_address_is_target_forbidden(self) -> None:
        for url in ("http://169.254.169.254/latest/meta-data/", "http://10.0.0.1/hook"):
            with self.assertRaises(ValidationError) as caught:
                self.client.create_webhook(url, ["job.completed"])
            self.assertEqual((caught.exception.status, caught.exception.code), (400, "target_forbidden"), url)
        self.assertEqual([w for w in self.client.list_webhooks() if "169.254" in w["url"] or "10.0.0.1" in w["url"]], [])

    def test_a_completed_run_is_delivered_signed_and_listed_in_the_deliveries(self) -> None:
        received: List[Dict[str, Any]] = []

        class Receiver(http.server.BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                received.append({"headers": {k.lower(): v for k, v in self.headers.items()}, "body": body})
                self.send_response(204)
                self.end_headers()

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        hook = self.client.create_webhook(f"http://127.0.0.1:{server.server_address[1]}/hook", ["job.completed"])
        try:
            job = self.client.wait_for_completion(self.client.run(yaml_content=quotes_yaml(f"{self.site}/quotes/", max_pages=1)), interval=0.1, timeout=60)
            self.assertTrue(job.is_completed, job.status_message)
            deadline = time.monotonic() + 30
            deliveries = self.client.list_webhook_deliveries(hook["id"])
            while not deliveries and time.monotonic() < deadline:
                time.sleep(0.1)
                deliveries = self.client.list_webhook_deliveries(hook["id"])
        finally:
            self.client.delete_webhook(hook["id"])
        self.assertEqual(len(deliveries), 1, deliveries)
        d = deliveries[0]
        self.assertEqual(
            (d["event"], d["job_id"], d["attempt"], d["status_code"], d["outcome"], d["error"], d["next_attempt_at"]),
            ("job.completed", job.id, 1, 204, "delivered", None, None),
        )
        self.assertEqual(len(received), 1)
        headers, body = received[0]["headers"], received[0]["body"]
        self.assertEqual(headers["webhook-id"], d["message_id"])
        # The receiver's check (Standard Webhooks): HMAC-SHA256 of "id.timestamp.body" with the secret's key.
        key = base64.b64decode(hook["secret"][len("whsec_"):])
        signed = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + body
        expected = "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
        self.assertIn(expected, headers["webhook-signature"].split(" "))
        payload = json.loads(body)
        self.assertEqual((payload["type"], payload["data"]["job_id"], payload["data"]["status"]), ("job.completed", job.id, "completed"))

    # -------------------------------------------------------------------------------------- tools

    def test_seo_analyzer_returns_audits(self) -> None:
        report = self.client.tool("seo-analyzer", f"{self.site}/quotes/")
        self.assertIsInstance(report, dict)
        self.assertIn("audits", report)
        self.assertTrue(report["audits"])

    def test_screenshot_returns_png_bytes_or_json(self) -> None:
        image = self.client.tool("screenshot", f"{self.site}/quotes/", width=800, height=600)
        self.assertIsInstance(image, bytes)
        self.assertEqual(image[:8], PNG_SIGNATURE)
        self.assertEqual(png_size(image), (800, 600))

        stored = self.client.tool("screenshot", f"{self.site}/quotes/", accept_json=True, width=640, height=480)
        self.assertIsInstance(stored, dict)
        self.assertEqual((stored["width"], stored["height"], stored["format"]), (640, 480, "png"))
        with urllib.request.urlopen(stored["url"], timeout=30) as res:  # works without the key for an hour
            fetched = res.read()
        self.assertEqual(len(fetched), stored["bytes"])
        self.assertEqual(png_size(fetched), (640, 480))

    def test_a_tool_with_an_unknown_parameter_or_a_bad_url_is_a_validation_error(self) -> None:
        with self.assertRaises(ValidationError) as caught:
            self.client.tool("seo-analyzer", f"{self.site}/quotes/", no_such_option=True)
        self.assertEqual(caught.exception.code, "invalid_request")
        with self.assertRaises(ValidationError) as caught:
            self.client.tool("seo-analyzer", "ftp://example.com/")
        self.assertIn(caught.exception.code, ("invalid_url", "target_forbidden"))
        with self.assertRaises(ValueError):
            self.client.tool("../me", f"{self.site}/quotes/")

    # ------------------------------------------------------------------------------ plan and limits

    def test_free_plan_run_is_plan_required_and_the_eleventh_call_is_rate_limited(self) -> None:
        free = Client(api_key=env("SAI_FREE_API_KEY"), base_url=self.base_url)
        self.assertEqual(free.me()["subscription"]["plan"], "free")
        with self.assertRaises(ForbiddenError) as caught:
            free.run(yaml_content=quotes_yaml(f"{self.site}/quotes/"))
        err = caught.exception
        self.assertEqual((err.status, err.code), (403, "plan_required"))
        self.assertEqual(err.details[0]["plan"], "free")

        # Variant B: the Free plan starts 10 calls an hour (a refused run is not counted); the 11th is refused.
        hour = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H")
        accepted = 0
        limited: Optional[RateLimitError] = None
        for _ in range(21):
            try:
                report = free.tool("content-extractor", f"{self.site}/quotes/")
                self.assertIn("text", report)
                accepted += 1
            except RateLimitError as e:
                limited = e
                break
        self.assertIsNotNone(limited, "the Free plan's hourly limit was never reached")
        assert limited is not None
        same_hour = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H") == hour
        if same_hour:
            self.assertEqual(accepted, 10)
        self.assertEqual((limited.status, limited.code), (429, "rate_limited"))
        self.assertIsNotNone(limited.retry_after)
        assert limited.retry_after is not None
        self.assertTrue(1 <= limited.retry_after <= 3600, limited.retry_after)
        self.assertEqual(limited.retry_after, limited.details[0]["retry_after_seconds"])
        self.assertFalse(isinstance(limited, QuotaExceededError))
        # Reads are not rate-limited by plan.
        self.assertEqual(free.me()["subscription"]["plan"], "free")

    def test_a_spent_month_is_quota_exceeded(self) -> None:
        client = Client(api_key=env("SAI_QUOTA_API_KEY"), base_url=self.base_url)
        client.tool("content-extractor", f"{self.site}/quotes/")  # the month's 0.1 credit
        with self.assertRaises(QuotaExceededError) as caught:
            client.tool("content-extractor", f"{self.site}/quotes/")
        err = caught.exception
        self.assertEqual((err.status, err.code), (429, "quota_exceeded"))
        self.assertNotIsInstance(err, RateLimitError)
        self.assertEqual(err.details[0]["remaining"], 0)
        self.assertEqual(client.me()["subscription"]["credits_remaining"], 0)


# ---------------------------------------------------------------------------------------------- stub

Reply = Tuple[int, Dict[str, str], bytes]


class _Stub:
    """A scripted HTTP server on loopback: ``script[(method, path)]`` is a list of replies used in turn (the
    last one repeats); every request is recorded with its headers, body and arrival time."""

    def __init__(self) -> None:
        self.script: Dict[Tuple[str, str], List[Any]] = {}
        self.requests: List[Dict[str, Any]] = []
        stub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                key = (self.command, self.path)
                stub.requests.append({"method": self.command, "path": self.path, "headers": dict(self.headers), "body": body, "at": time.monotonic()})
                replies = stub.script.get(key) or [(404, {}, b'{"error":"no script","code":"not_found"}')]
                reply = replies.pop(0) if len(replies) > 1 else replies[0]
                if callable(reply):
                    reply = reply()
                status, headers, payload = reply
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                try:
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (its time-out tests)

            do_GET = do_POST = do_PUT = do_DELETE = _answer

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def count(self, method: str, path: str) -> int:
        return sum(1 for r in self.requests if r["method"] == method and r["path"] == path)


def json_reply(status: int, body: Any, headers: Optional[Dict[str, str]] = None) -> Reply:
    return (status, {"Content-Type": "application/json", **(headers or {})}, json.dumps(body).encode())


def error_reply(status: int, code: str, headers: Optional[Dict[str, str]] = None, details: Optional[List[Any]] = None) -> Reply:
    return json_reply(status, {"error": f"stub {code}", "code": code, "details": details or []}, headers)


ME = {"user": {"id": 1, "email": "a@example.com", "first_name": "", "last_name": ""}, "subscription": {"plan": "pro"}}


class RetryTest(unittest.TestCase):
    """Retries, back-off and what goes on the wire, against the scripted stub."""

    def setUp(self) -> None:
        self.stub = _Stub()
        self.addCleanup(self.stub.close)
        self.client = Client(api_key="sai_test", base_url=self.stub.url, max_retries=3, backoff_base=0.05, backoff_max=0.2, timeout=5)

    def test_a_get_answered_503_then_200_is_retried(self) -> None:
        self.stub.script[("GET", "/api/v1/me/")] = [error_reply(503, "service_busy"), json_reply(200, ME)]
        self.assertEqual(self.client.me(), ME)
        self.assertEqual(self.stub.count("GET", "/api/v1/me/"), 2)

    def test_a_post_answered_503_is_not_retried(self) -> None:
        self.stub.script[("POST", "/api/v1/run/")] = [error_reply(503, "queue_unavailable")]
        with self.assertRaises(ServerError) as caught:
            self.client.run(yaml_content="x")
        self.assertEqual((caught.exception.status, caught.exception.code), (503, "queue_unavailable"))
        self.assertEqual(self.stub.count("POST", "/api/v1/run/"), 1)

    def test_tool_generate_login_and_create_config_posts_are_not_retried(self) -> None:
        for path in ("/api/v1/tools/seo-analyzer/", "/api/v1/generate/", "/api/v1/auth/login/", "/api/v1/configs/"):
            self.stub.script[("POST", path)] = [error_reply(500, "internal_error")]
        calls: List[Callable[[], Any]] = [
            lambda: self.client.tool("seo-analyzer", "https://example.com/"),
            lambda: self.client.generate("https://example.com/", "x"),
            lambda: Client.login("a@example.com", "pw", base_url=self.stub.url, backoff_base=0.01),
            lambda: self.client.create_config("n", "https://example.com/", "y"),
        ]
        for call in calls:
            with self.assertRaises(ServerError):
                call()
        for path in ("/api/v1/tools/seo-analyzer/", "/api/v1/generate/", "/api/v1/auth/login/", "/api/v1/configs/"):
            self.assertEqual(self.stub.count("POST", path), 1, path)

    def test_schedule_and_webhook_posts_are_not_retried_a_schedule_update_is(self) -> None:
        self.stub.script[("POST", "/api/v1/schedules/")] = [error_reply(503, "service_busy")]
        self.stub.script[("POST", "/api/v1/webhooks/")] = [error_reply(503, "service_busy")]
        with self.assertRaises(ServerError):
            self.client.create_schedule("c1", "0 6 * * *")
        with self.assertRaises(ServerError):
            self.client.create_webhook("https://example.com/hook", WEBHOOK_EVENTS)
        self.assertEqual((self.stub.count("POST", "/api/v1/schedules/"), self.stub.count("POST", "/api/v1/webhooks/")), (1, 1))
        self.assertEqual(json.loads(self.stub.requests[0]["body"]), {"config_id": "c1", "cron": "0 6 * * *"}, "unset options are left out")
        self.assertEqual(json.loads(self.stub.requests[1]["body"]), {"url": "https://example.com/hook", "events": ["job.completed", "job.failed", "job.changed"]})

        schedule = {"id": "s1", "enabled": False}
        self.stub.script[("PUT", "/api/v1/schedules/s1/")] = [error_reply(503, "service_busy"), json_reply(200, schedule)]
        self.assertEqual(self.client.update_schedule("s1", enabled=False), schedule)
        self.assertEqual(self.stub.count("PUT", "/api/v1/schedules/s1/"), 2)
        self.assertEqual(json.loads(self.stub.requests[-1]["body"]), {"enabled": False})
        self.stub.script[("GET", "/api/v1/webhooks/w%2F1/deliveries/?limit=3")] = [json_reply(200, {"deliveries": [{"id": "d1"}]})]
        self.assertEqual(self.client.list_webhook_deliveries("w/1", limit=3), [{"id": "d1"}])
        self.stub.script[("DELETE", "/api/v1/schedules/s1/")] = [error_reply(503, "service_busy"), error_reply(404, "not_found")]
        self.client.delete_schedule("s1")  # the first attempt may have deleted it

    def test_a_429_rate_limited_with_retry_after_1_is_retried_after_a_second(self) -> None:
        self.stub.script[("GET", "/api/v1/configs/")] = [
            error_reply(429, "rate_limited", {"Retry-After": "1"}, [{"limit": 10, "window": "hour", "retry_after_seconds": 1}]),
            json_reply(200, {"count": 1, "results": [{"id": "c1", "name": "n", "target_url": "https://example.com/", "created_at": "2026-01-01T00:00:00Z"}]}),
        ]
        started = time.monotonic()
        configs = self.client.list_configs()
        elapsed = time.monotonic() - started
        self.assertEqual([c["id"] for c in configs], ["c1"])
        times = [r["at"] for r in self.stub.requests if r["path"] == "/api/v1/configs/"]
        self.assertEqual(len(times), 2)
        self.assertGreaterEqual(times[1] - times[0], 1.0)
        self.assertLess(elapsed, 3.0)

    def test_a_retry_after_longer_than_max_retry_wait_is_raised_at_once(self) -> None:
        self.stub.script[("GET", "/api/v1/me/")] = [error_reply(429, "rate_limited", {"Retry-After": "3600"}), json_reply(200, ME)]
        started = time.monotonic()
        with self.assertRaises(RateLimitError) as caught:
            self.client.me()
        self.assertLess(time.monotonic() - started, 1.0)
        self.assertEqual(caught.exception.retry_after, 3600)
        self.assertEqual(self.stub.count("GET", "/api/v1/me/"), 1)

    def test_retry_after_as_an_http_date(self) -> None:
        when = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=2)
        http_date = when.strftime("%a, %d %b %Y %H:%M:%S GMT")
        self.stub.script[("GET", "/api/v1/me/")] = [error_reply(429, "rate_limited", {"Retry-After": http_date})]
        client = Client(api_key="sai_test", base_url=self.stub.url, max_retries=0)
        with self.assertRaises(RateLimitError) as caught:
            client.me()
        assert caught.exception.retry_after is not None
        self.assertTrue(0 < caught.exception.retry_after <= 2.0, caught.exception.retry_after)

    def test_quota_exceeded_is_never_retried(self) -> None:
        self.stub.script[("GET", "/api/v1/me/")] = [error_reply(429, "quota_exceeded", details=[{"unit": "credits", "remaining": 0}])]
        with self.assertRaises(QuotaExceededError) as caught:
            self.client.me()
        self.assertEqual(caught.exception.details, [{"unit": "credits", "remaining": 0}])
        self.assertEqual(self.stub.count("GET", "/api/v1/me/"), 1)

    def test_5xx_retries_stop_after_max_retries(self) -> None:
        self.stub.script[("GET", "/api/v1/me/")] = [error_reply(500, "internal_error")]
        client = Client(api_key="sai_test", base_url=self.stub.url, max_retries=2, backoff_base=0.01)
        with self.assertRaises(ServerError):
            client.me()
        self.assertEqual(self.stub.count("GET", "/api/v1/me/"), 3)
        no_retry = Client(api_key="sai_test", base_url=self.stub.url, max_retries=0)
        with self.assertRaises(ServerError):
            no_retry.me()
        self.assertEqual(self.stub.count("GET", "/api/v1/me/"), 4)

    def test_back_off_grows_between_retries(self) -> None:
        self.stub.script[("GET", "/api/v1/me/")] = [error_reply(502, "bad_gateway")]
        client = Client(api_key="sai_test", base_url=self.stub.url, max_retries=3, backoff_base=0.1, backoff_max=10)
        with self.assertRaises(ServerError):
            client.me()
        times = [r["at"] for r in self.stub.requests]
        gaps = [b - a for a, b in zip(times, times[1:])]
        self.assertEqual(len(gaps), 3)
        # Equal jitter: retry n waits between half and all of 0.1 * 2**n seconds.
        for n, gap in enumerate(gaps):
            self.assertGreaterEqual(gap, 0.1 * 2 ** n / 2 - 0.01, gaps)
            self.assertLess(gap, 0.1 * 2 ** n + 0.25, gaps)

    def test_a_delete_retried_after_a_503_that_finds_it_gone_is_done(self) -> None:
        self.stub.script[("DELETE", "/api/v1/configs/c1/")] = [error_reply(503, "service_busy"), error_reply(404, "not_found")]
        self.client.delete_config("c1")  # no NotFoundError
        self.assertEqual(self.stub.count("DELETE", "/api/v1/configs/c1/"), 2)

    def test_network_errors_are_retried_then_raised_as_network_error(self) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]  # closed when the block ends: nothing listens there
        client = Client(api_key="sai_test", base_url=f"http://127.0.0.1:{port}", max_retries=2, backoff_base=0.05)
        started = time.monotonic()
        with self.assertRaises(NetworkError) as caught:
            client.me()
        self.assertIsNone(caught.exception.status)
        self.assertIsNotNone(caught.exception.__cause__)
        self.assertGreaterEqual(time.monotonic() - started, 0.05 / 2 + 0.1 / 2 - 0.01, "two back-off waits")

    def test_a_request_that_times_out_is_a_network_error(self) -> None:
        def slow() -> Reply:
            time.sleep(1.0)
            return json_reply(200, ME)

        self.stub.script[("GET", "/api/v1/me/")] = [slow]
        client = Client(api_key="sai_test", base_url=self.stub.url, max_retries=1, backoff_base=0.01, timeout=0.2)
        with self.assertRaises(NetworkError):
            client.me()
        self.assertEqual(self.stub.count("GET", "/api/v1/me/"), 2, "a time-out of a GET is retried")

    def test_headers_user_agent_json_body_and_key(self) -> None:
        self.stub.script[("POST", "/api/v1/generate/")] = [json_reply(202, {"id": "j1", "status": "pending", "progress": 0, "job_type": "generate", "target_url": "https://example.com/é", "created_at": "2026-01-01T00:00:00Z"})]
        job = self.client.generate("https://example.com/é", "prix en €")
        self.assertEqual((job.id, job.status, job.target_url), ("j1", "pending", "https://example.com/é"))
        request = self.stub.requests[-1]
        headers = {k.lower(): v for k, v in request["headers"].items()}
        self.assertEqual(headers["user-agent"], f"scrape-ai-python/{scrape_ai.__version__}")
        self.assertEqual(headers["content-type"], "application/json")
        self.assertEqual(headers["authorization"], "Bearer sai_test")
        self.assertEqual(json.loads(request["body"].decode("utf-8")), {"url": "https://example.com/é", "prompt": "prix en €"})

        self.stub.script[("POST", "/api/v1/auth/login/")] = [json_reply(200, {"api_key": "sai_new", "email": "a@example.com", "plan": "pro"})]
        client = Client.login("a@example.com", "pw", base_url=self.stub.url)
        login_headers = {k.lower() for k in self.stub.requests[-1]["headers"]}
        self.assertNotIn("authorization", login_headers, "login carries no key")
        self.assertEqual(client.api_key, "sai_new")
        self.assertEqual(client.account, {"api_key": "sai_new", "email": "a@example.com", "plan": "pro"})

    def test_generate_sends_example_urls_only_when_given(self) -> None:
        created = json_reply(202, {"id": "j1", "status": "pending", "progress": 0, "job_type": "generate"})
        self.stub.script[("POST", "/api/v1/generate/")] = [created]
        pages = ("https://example.com/list?page=2", "https://example.com/search?q=b")
        self.client.generate("https://example.com/list", "items", example_urls=pages, config_id="c1")
        self.assertEqual(json.loads(self.stub.requests[-1]["body"]), {"url": "https://example.com/list", "prompt": "items", "config_id": "c1", "example_urls": list(pages)})
        self.client.generate("https://example.com/list", "items")
        self.assertNotIn("example_urls", json.loads(self.stub.requests[-1]["body"]))
        with self.assertRaises(TypeError):
            self.client.generate("https://example.com/list", "items", example_urls="https://example.com/list?page=2")
        self.assertEqual(self.stub.count("POST", "/api/v1/generate/"), 2, "one string is refused before sending")

    def test_error_mapping_by_code_then_status(self) -> None:
        cases = [
            (error_reply(401, "unauthorized"), AuthenticationError),
            (error_reply(403, "plan_required"), ForbiddenError),
            (error_reply(404, "not_found"), NotFoundError),
            (error_reply(409, "job_not_finished"), ConflictError),
            (error_reply(422, "target_unreachable", details=[{"url": "u", "reason": "dns"}]), ValidationError),
            (error_reply(400, "invalid_request"), ValidationError),
            ((429, {}, b"Too Many Requests"), RateLimitError),  # a proxy's 429 without a code
            ((418, {}, b""), ScrapeAIError),
        ]
        client = Client(api_key="sai_test", base_url=self.stub.url, max_retries=0)
        for reply, cls in cases:
            self.stub.script[("GET", "/api/v1/jobs/j/status/")] = [reply]
            with self.assertRaises(cls) as caught:
                client.get_job("j")
            self.assertEqual(type(caught.exception), cls, reply)
            self.assertEqual(caught.exception.status, reply[0])
        self.assertEqual(caught.exception.message, "HTTP 418")

    def test_a_redirect_is_not_followed(self) -> None:
        self.stub.script[("GET", "/api/v1/me/")] = [(302, {"Location": "http://127.0.0.1:9/elsewhere"}, b"")]
        with self.assertRaises(ScrapeAIError) as caught:
            self.client.me()
        self.assertEqual(caught.exception.status, 302)
        self.assertEqual(len(self.stub.requests), 1)

    def test_screenshot_bytes_and_accept_headers(self) -> None:
        image = PNG_SIGNATURE + b"rest"
        self.stub.script[("POST", "/api/v1/tools/screenshot/")] = [(200, {"Content-Type": "image/png"}, image), json_reply(200, {"url": "u", "width": 1, "height": 1, "format": "png", "bytes": 4, "expires_at": "t"})]
        self.assertEqual(self.client.tool("screenshot", "https://example.com/", full_page=True, delay=None), image)
        first = self.stub.requests[-1]
        self.assertEqual(json.loads(first["body"]), {"url": "https://example.com/", "full_page": True})
        self.assertNotIn("application/json", first["headers"].get("Accept", ""))
        self.assertEqual(self.client.tool("screenshot", "https://example.com/", accept_json=True)["url"], "u")
        self.assertEqual(self.stub.requests[-1]["headers"].get("Accept"), "application/json")

    def test_list_jobs_follows_the_cursor(self) -> None:
        page1 = json_reply(200, {"count": 3, "next_cursor": "abc", "results": [{"id": "j3", "status": "running", "progress": 40}, {"id": "j2", "status": "failed", "progress": 100}]})
        page2 = json_reply(200, {"count": 3, "next_cursor": None, "results": [{"id": "j1", "status": "completed", "progress": 100}]})
        self.stub.script[("GET", "/api/v1/jobs/?limit=100")] = [page1]
        self.stub.script[("GET", "/api/v1/jobs/?limit=100&cursor=abc")] = [page2]
        jobs = self.client.list_jobs()
        self.assertEqual([(j.id, j.is_running, j.is_failed, j.is_completed) for j in jobs], [("j3", True, False, False), ("j2", False, True, False), ("j1", False, False, True)])
        self.stub.script[("GET", "/api/v1/jobs/?limit=1")] = [page1]
        self.assertEqual([j.id for j in self.client.list_jobs(limit=1)], ["j3"])
        self.assertEqual(self.stub.count("GET", "/api/v1/jobs/?limit=1"), 1, "stops at the limit")

    def test_wait_for_completion_polls_and_calls_back_every_time(self) -> None:
        path = "/api/v1/jobs/j1/status/"
        self.stub.script[("GET", path)] = [
            json_reply(200, {"id": "j1", "status": "pending", "progress": 0}),
            json_reply(200, {"id": "j1", "status": "running", "progress": 50}),
            json_reply(200, {"id": "j1", "status": "failed", "progress": 60, "status_message": "target_failed: x"}),
        ]
        seen: List[int] = []
        job = self.client.wait_for_completion("j1", on_progress=lambda j: seen.append(j.progress), interval=0.01)
        self.assertEqual(seen, [0, 50, 60])
        self.assertTrue(job.is_failed)
        self.assertFalse(job.is_running)
        self.assertEqual(job.status_message, "target_failed: x")

    def test_generate_with_run_raises_job_failed_when_the_run_could_not_start_or_failed(self) -> None:
        created = json_reply(202, {"id": "g1", "status": "pending", "progress": 0, "job_type": "generate"})
        self.stub.script[("POST", "/api/v1/generate/")] = [created, created]
        self.stub.script[("GET", "/api/v1/jobs/g1/status/")] = [
            json_reply(200, {"id": "g1", "status": "completed", "progress": 100, "job_type": "generate", "run_job_id": None, "run_error": "quota_exceeded: Monthly quota used up"}),
            json_reply(200, {"id": "g1", "status": "completed", "progress": 100, "job_type": "generate", "run_job_id": "r1"}),
        ]
        self.stub.script[("GET", "/api/v1/jobs/r1/status/")] = [json_reply(200, {"id": "r1", "status": "failed", "progress": 40, "job_type": "run", "status_message": "target_failed: 404"})]
        with self.assertRaises(JobFailedError) as caught:
            self.client.generate("https://example.com/", "x", run=True, interval=0.01)
        self.assertEqual(caught.exception.code, "quota_exceeded")
        self.assertEqual(caught.exception.job.id, "g1")
        self.assertIn("its run could not start", str(caught.exception))
        self.assertEqual(json.loads(self.stub.requests[0]["body"])["run"], True)
        with self.assertRaises(JobFailedError) as failed:
            self.client.generate("https://example.com/", "x", run=True, interval=0.01)
        self.assertEqual((failed.exception.code, failed.exception.job.id), ("target_failed", "r1"))

    def test_get_results_joins_the_entries_and_a_failed_job_has_none(self) -> None:
        self.stub.script[("GET", "/api/v1/jobs/j1/results/")] = [json_reply(200, [{"data": [{"a": 1}], "row_count": 1}, {"data": [{"a": 2}], "row_count": 1}])]
        self.assertEqual(self.client.get_results("j1"), [{"a": 1}, {"a": 2}])
        self.stub.script[("GET", "/api/v1/jobs/j2/results/")] = [json_reply(200, [])]
        self.assertEqual(self.client.get_results("j2"), [])


class ClientOptionsTest(unittest.TestCase):
    """Options checked without any request."""

    def test_base_url_forms(self) -> None:
        for given in ("http://h:1", "http://h:1/", "http://h:1/api/v1", "http://h:1/api/v1/"):
            self.assertEqual(Client(api_key="k", base_url=given).base_url, "http://h:1")
        self.assertEqual(Client(api_key="k", base_url="https://x.execute-api.eu-west-1.amazonaws.com/prod/").base_url, "https://x.execute-api.eu-west-1.amazonaws.com/prod")
        with self.assertRaises(ValueError):
            Client(api_key="k", base_url="ftp://h/")
        with self.assertRaises(ValueError):
            Client(api_key="k", base_url="h:1", max_retries=1)
        with self.assertRaises(ValueError):
            Client(api_key="k", base_url="http://h:1", max_retries=-1)

    def test_job_object(self) -> None:
        job = Job({"id": "j", "status": "validating", "progress": 80, "extra": [1], "results": {"data": [{"x": 1}], "row_count": 7}})
        self.assertTrue(job.is_running)
        self.assertFalse(job.is_finished)
        self.assertEqual(job["extra"], [1])
        self.assertEqual(job.get("missing", "d"), "d")
        self.assertIsNone(job.completed_at)
        self.assertEqual((job.rows, job.row_count), ([{"x": 1}], 7))
        self.assertEqual(dict(job)["progress"], 80)
        self.assertEqual(job, Job(job.raw))


if __name__ == "__main__":
    unittest.main()
