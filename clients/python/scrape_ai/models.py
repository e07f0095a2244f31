"""Objects the client returns: :class:`Job`, and the shapes of configs and rows (plain dicts)."""

from __future__ import annotations

from typing import Any, Dict, Iterator, List, Mapping, Optional

__all__ = ["Job", "GeneratedRows", "FINISHED_STATES", "RUNNING_STATES"]

#: States of a job that will not change any more (docs/spec.md "States and transitions").
FINISHED_STATES = frozenset({"completed", "failed"})

#: States of an unfinished job: queued (``pending``), a generate job's steps (``analyzing``, ``generating``,
#: ``validating``) and a run's ``running``.
RUNNING_STATES = frozenset({"pending", "analyzing", "generating", "validating", "running"})


class Job(Mapping[str, Any]):
    """A generate or run job as the service returned it (docs/spec.md "Job"; docs/api.md "Jobs").

    The SPEC fields are attributes (``None`` when the answer did not carry the field: a job list item has no
    ``results``, a creation answer has no ``status_message``); every field, known or not, is also reachable
    dict-style (``job["items_found"]``, ``job.get("x")``, ``dict(job)``) and the whole answer is ``raw``.

    A Job is a snapshot: it does not change when the job moves on; call :meth:`Client.get_job` again.
    """

    __slots__ = ("raw",)

    def __init__(self, data: Mapping[str, Any]) -> None:
        #: The answer's JSON object, as received.
        self.raw: Dict[str, Any] = dict(data)

    # Mapping protocol: dict-style access to every field.
    def __getitem__(self, key: str) -> Any:
        return self.raw[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.raw)

    def __len__(self) -> int:
        return len(self.raw)

    def __repr__(self) -> str:
        return f"Job(id={self.id!r}, job_type={self.job_type!r}, status={self.status!r}, progress={self.progress!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Job):
            return self.raw == other.raw
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable snapshot, like a dict

    @property
    def id(self) -> str:
        """The job's UUID."""
        return str(self.raw.get("id", ""))

    @property
    def status(self) -> str:
        """``pending``, ``analyzing``, ``generating``, ``validating``, ``running``, ``completed`` or ``failed``."""
        return str(self.raw.get("status", ""))

    @property
    def progress(self) -> int:
        """0-100; never goes down (docs/api.md)."""
        value = self.raw.get("progress", 0)
        return int(value) if isinstance(value, (int, float)) else 0

    @property
    def job_type(self) -> Optional[str]:
        """``generate`` or ``run``."""
        return self.raw.get("job_type")

    @property
    def target_url(self) -> Optional[str]:
        """The URL the job starts from."""
        return self.raw.get("target_url")

    @property
    def created_at(self) -> Optional[str]:
        """ISO 8601 UTC timestamp of the job's creation."""
        return self.raw.get("created_at")

    @property
    def completed_at(self) -> Optional[str]:
        """ISO 8601 UTC timestamp, once the job is completed or failed; else ``None``."""
        return self.raw.get("completed_at")

    @property
    def status_message(self) -> Optional[str]:
        """What is happening, or the outcome; a failed job's message starts with its error code
        (``target_failed: https://... answered HTTP 404``)."""
        return self.raw.get("status_message")

    @property
    def items_found(self) -> Optional[int]:
        """Items scraped so far (a run) or in the trial run (a generate job)."""
        return self.raw.get("items_found")

    @property
    def pages_scraped(self) -> Optional[int]:
        """Pages loaded and read: listing pages (and in-page pagination steps), detail pages, the categories' index
        page; failed pages are warnings, not counted. A generate job: its trial's."""
        return self.raw.get("pages_scraped")

    @property
    def config_name(self) -> Optional[str]:
        """The name of the config the job runs (or a generate job saved), as it was when the job was made; ``None``
        when it has none."""
        return self.raw.get("config_name")

    @property
    def warnings(self) -> List[str]:
        """A finished run's warnings (problems that did not fail it), each naming its page once; ``[]`` otherwise
        (a job list item has only ``warning_count``)."""
        value = self.raw.get("warnings")
        return [str(w) for w in value] if isinstance(value, list) else []

    @property
    def api_discovered(self) -> Optional[bool]:
        """Whether the generator found a JSON API behind the page."""
        return self.raw.get("api_discovered")

    @property
    def results(self) -> Optional[Dict[str, Any]]:
        """``{data, row_count}`` of a status answer: ``data`` is the first 100 rows of a completed job (all
        rows: :meth:`Client.get_results`), ``row_count`` the number of rows in all. ``None`` in list items
        and creation answers."""
        return self.raw.get("results")

    @property
    def rows(self) -> List[Dict[str, Any]]:
        """``results.data`` (the preview rows of a status answer), ``[]`` when absent."""
        results = self.results
        data = results.get("data") if isinstance(results, Mapping) else None
        return list(data) if isinstance(data, list) else []

    @property
    def row_count(self) -> Optional[int]:
        """``results.row_count`` (every row of the job, not only the preview), ``None`` when absent."""
        results = self.results
        return results.get("row_count") if isinstance(results, Mapping) else None

    @property
    def yaml_config(self) -> Optional[Dict[str, Any]]:
        """``{id, yaml_content}``: the config the job ran or produced (``id`` is ``None`` for inline YAML)."""
        return self.raw.get("yaml_config")

    @property
    def is_running(self) -> bool:
        """True while the job is unfinished: ``pending`` (queued) or in one of the working states. An
        unknown state counts as unfinished, so waiting loops keep polling."""
        return self.status not in FINISHED_STATES

    @property
    def is_completed(self) -> bool:
        """True when the job finished successfully (``completed``; progress 100)."""
        return self.status == "completed"

    @property
    def is_failed(self) -> bool:
        """True when the job finished with an error (``failed``); ``status_message`` says why."""
        return self.status == "failed"

    @property
    def is_finished(self) -> bool:
        """True when the job is ``completed`` or ``failed``: its state will not change any more."""
        return self.status in FINISHED_STATES

    def to_dict(self) -> Dict[str, Any]:
        """A copy of the answer as a plain dict."""
        return dict(self.raw)


class GeneratedRows(List[Dict[str, Any]]):
    """What :meth:`Client.generate` returns with ``run=True``: a list of every row of the run of the generated config
    (``GET /api/v1/jobs/{run_job_id}/results/``), which also says where they come from.

    Attributes:
        generate_job: the finished generate job (its ``rows`` are the trial's, of the first pages only).
        run_job: the finished run job of the saved config, whose rows these are.
        config_id: the saved config (``generate_job.yaml_config["id"]``), to run again with :meth:`Client.run`.
    """

    def __init__(self, rows: List[Dict[str, Any]], generate_job: Job, run_job: Job) -> None:
        super().__init__(rows)
        self.generate_job = generate_job
        self.run_job = run_job
        yaml_config = generate_job.yaml_config or {}
        self.config_id: Optional[str] = yaml_config.get("id")

