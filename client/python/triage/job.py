"""The job object of the protocol (triage-protocol(7), THE JOB OBJECT) as a
read-only Python object, and the watch event that carries one."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Mapping

from ._wire import decode_bytes
from .errors import ProtocolError

#: States after which a job never changes again, but by a new attempt.
TERMINAL_STATES = frozenset(
    {"succeeded", "failed", "timed_out", "canceled", "lost"})


@dataclass(frozen=True)
class Job:
    """A job as the daemon described it at one moment.

    The common fields are typed attributes; ``raw`` is the whole object as
    the daemon sent it, for the fields this class does not name (the
    protocol adds members over time, and a client must ignore what it does
    not know rather than fail). ``argv`` elements and ``cwd`` are str, or
    bytes where the daemon sent {"base64": ...} (bytes that are not UTF-8).
    Times are the daemon's RFC 3339 strings, or None.

    ``key`` is the idempotency key the job was submitted with, or None;
    ``existing`` is True only on the Job a submit returned when that key
    named a job already kept (nothing was created). ``result`` is the
    payload the job's ended attempt wrote to the file ``$TRIAGE_RESULT``
    names, as bytes, or None when it wrote none; ``result_truncated``
    says the daemon cut it at its ``max_result``.
    """

    id: int
    name: str
    state: str
    priority: str
    argv: list[str | bytes]
    cwd: str | bytes | None
    attempt: int
    exit_code: int | None
    signal: str | None
    reason: str | None
    pid: int | None
    position: int | None
    pending_reason: str | None
    held: bool
    labels: dict[str, str]
    submitted_at: str | None
    started_at: str | None
    finished_at: str | None
    uid: int | None
    key: str | None = None
    existing: bool = False
    result: bytes | None = field(default=None, repr=False)
    result_truncated: bool = False
    raw: dict[str, Any] = field(default_factory=dict, repr=False,
                                compare=False)

    @classmethod
    def from_dict(cls, obj: Mapping[str, Any]) -> "Job":
        """A Job from the daemon's job object. Missing members (an older
        daemon's) become None or an empty value, never an error."""
        raw = dict(obj)
        get = raw.get
        argv = get("argv") or []
        cwd = get("cwd")
        result = get("result")
        # Set in one go rather than through the frozen dataclass's
        # __init__ (a guarded setattr a field): every reply makes one.
        job = object.__new__(cls)
        job.__dict__.update(
            id=int(raw["id"]),
            name=get("name") or "",
            state=get("state") or "",
            priority=get("priority") or "",
            argv=[a if isinstance(a, str) else decode_bytes(a) for a in argv],
            cwd=cwd if cwd is None or isinstance(cwd, str) else decode_bytes(cwd),
            attempt=get("attempt") or 0,
            exit_code=get("exit_code"),
            signal=get("signal"),
            reason=get("reason"),
            pid=get("pid"),
            position=get("position"),
            pending_reason=get("pending_reason"),
            held=bool(get("held", False)),
            labels=dict(get("labels") or {}),
            submitted_at=get("submitted_at"),
            started_at=get("started_at"),
            finished_at=get("finished_at"),
            uid=get("uid"),
            key=get("key"),
            existing=get("existing") is True,
            result=None if result is None else _result_bytes(result),
            result_truncated=get("result_truncated") is True,
            raw=raw,
        )
        return job

    @property
    def terminal(self) -> bool:
        """True once the job has ended (succeeded, failed, timed_out,
        canceled or lost): only a retry changes it after that."""
        return self.state in TERMINAL_STATES

    @property
    def succeeded(self) -> bool:
        """True when the job's process exited with status 0."""
        return self.state == "succeeded"

    def result_text(self, encoding: str = "utf-8",
                    errors: str = "strict") -> str | None:
        """The result payload decoded as text, or None when there is none.
        A payload the daemon cut (``result_truncated``) may end inside a
        character: pass ``errors="replace"`` to read it anyway."""
        if self.result is None:
            return None
        return self.result.decode(encoding, errors)

    def result_json(self) -> Any:
        """The result payload parsed as JSON (the usual way a job hands a
        service its answer: ``json.dump(answer, open(os.environ[
        "TRIAGE_RESULT"], "w"))``), or None when there is none.
        ValueError when it is not JSON, truncated payloads included."""
        if self.result is None:
            return None
        if self.result_truncated:
            raise ValueError(f"job {self.id}'s result was truncated at the "
                             "daemon's max_result: it is not whole JSON")
        return json.loads(self.result)

    def __getitem__(self, key: str) -> Any:
        """Any member of the daemon's object, known to this class or not."""
        return self.raw[key]

    def get(self, key: str, default: Any = None) -> Any:
        """A member of the daemon's object, or default when it has none."""
        return self.raw.get(key, default)


def _result_bytes(value: Any) -> bytes | None:
    """The result member as bytes: a JSON string is UTF-8 text, a
    {"base64": ...} object other bytes (NON-UTF-8 BYTES)."""
    if value is None:
        return None
    decoded = decode_bytes(value)
    if isinstance(decoded, str):
        return decoded.encode("utf-8", "surrogateescape")
    if isinstance(decoded, bytes):
        return decoded
    raise ProtocolError(None, f"a job's result is neither a string nor "
                        f"{{\"base64\": ...}}: {value!r}")


@dataclass(frozen=True)
class Event:
    """One notification of a watch: ``method`` is the notification's method
    ("job", the only one protocol version 1.2 has) and ``job`` the job as it
    was at that change; ``params`` is the notification's params as sent."""

    method: str
    job: Job | None
    params: Any = field(repr=False, compare=False)
