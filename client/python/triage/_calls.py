"""What the sync and the async client share: building each request's params,
decoding each result, reading output pages and watch notifications, and the
reconnection policy. Nothing here does I/O; the clients only send and read."""

from __future__ import annotations

import base64
import binascii
import builtins
import errno
import os
import warnings
from dataclasses import dataclass, replace
from typing import Any, Callable, Generic, Iterator, Mapping, Sequence, TypeVar

from ._wire import caller_cwd, caller_env, encode_bytes
from .errors import DaemonUnavailable, ProtocolError
from .job import Event, Job


class _Default:
    """The type of DAEMON_DEFAULT."""

    def __repr__(self) -> str:
        return "triage.DAEMON_DEFAULT"


#: Pass as ``env`` or ``cwd`` of submit to send nothing, so that the daemon
#: applies its own default (a minimal environment; the user's home).
DAEMON_DEFAULT: Any = _Default()

# "Not given" for params where None means something on the wire
# (update's begin_at: null lets the job go at once).
_UNSET: Any = object()

# How long output(follow=True) lets a wait run between two polls of a live
# job's output: the wait returns as soon as the job ends, so this bounds only
# how stale a running job's output may be.
FOLLOW_POLL = 0.25

Filter = Mapping[str, Any]

# -- reconnecting (<triage/client.h>, triage_client_reconnect) -------------

#: The bound of one outage unless told otherwise (TRIAGE_RECONNECT_DEFAULT_MS):
#: a restart or an upgrade of the daemon takes seconds, not minutes.
RECONNECT_DEFAULT = 300.0
#: Between attempts to reach the daemon: the first pause, doubled each time
#: up to the last (TRIAGE_RECONNECT_FIRST_MS, TRIAGE_RECONNECT_MAX_MS).
RECONNECT_FIRST = 0.05
RECONNECT_MAX = 2.0

# The errors of connect() that mean "the daemon is away for now": keep trying.
_AWAY = frozenset({errno.ENOENT, errno.ECONNREFUSED, errno.EAGAIN})


# The largest $TRIAGE_RECONNECT the CLI takes (INT32_MAX ms, in seconds).
_RECONNECT_ENV_MAX = 2147483


def reconnect_limit(value: float | None) -> float:
    """Seconds one outage may last: ``value`` when given, else
    ``$TRIAGE_RECONNECT`` (whole seconds, as the CLI reads it), else 300.
    0 turns reconnecting off.

    A ``$TRIAGE_RECONNECT`` that is not a count of seconds (digits only,
    as client/cmd.c's cmd_reconnect_ms takes it) is said with a
    RuntimeWarning and the default taken, as the CLI does: a typo must not
    silently turn a long wait into a failure at the next restart."""
    if value is not None:
        return max(0.0, float(value))
    env = os.environ.get("TRIAGE_RECONNECT")
    if not env:
        return RECONNECT_DEFAULT
    if env.isascii() and env.isdigit() and int(env) <= _RECONNECT_ENV_MAX:
        return float(int(env))
    warnings.warn(f"TRIAGE_RECONNECT={env!r} is not a number of seconds: "
                  f"taking {RECONNECT_DEFAULT:g}", RuntimeWarning,
                  stacklevel=3)
    return RECONNECT_DEFAULT


def backoff() -> Iterator[float]:
    """The pauses between attempts to connect again."""
    pause = RECONNECT_FIRST
    while True:
        yield pause
        pause = min(pause * 2, RECONNECT_MAX)


def daemon_away(exc: BaseException) -> bool:
    """Whether a failure to connect means the daemon is away (restarting):
    its socket missing or refusing, as against e.g. EACCES."""
    cause = exc.__cause__ if isinstance(exc, DaemonUnavailable) else exc
    return isinstance(cause, OSError) and cause.errno in _AWAY


def gave_up(path: str, limit: float, last: BaseException | None) -> DaemonUnavailable:
    """What a redial that ran out of time raises: with no time to wait at
    all (one attempt), the failure to connect itself."""
    if limit <= 0 and isinstance(last, DaemonUnavailable):
        return last
    return DaemonUnavailable(f"lost triaged at {path}, and it has not come "
                             f"back in {limit:g} s ({last})", path)


# -- requests -----------------------------------------------------------------

def params_of(**kwargs: Any) -> dict[str, Any]:
    """The params given, leaving out those not given (None or _UNSET):
    the daemon refuses null for most params, and applies its default to a
    param left out."""
    return {k: v for k, v in kwargs.items() if v is not None and v is not _UNSET}


def _job(result: Any) -> Job:
    return Job.from_dict(result)


def _same(result: Any) -> Any:
    return result


def _nothing(result: Any) -> None:
    return None


R = TypeVar("R")


@dataclass(frozen=True)
class Call(Generic[R]):
    """One request to make: its method and params, how its result becomes
    what the client returns, and how long the daemon may take beyond the
    client's timeout (None: no bound). ``wait_timeout`` is a wait's own
    timeout, shortened when the wait is sent again after a reconnect."""

    method: str
    params: dict[str, Any] | None
    decode: Callable[[Any], R] = _same
    wait_for: float | None = 0.0
    wait_timeout: float | None = None

    @property
    def redoable(self) -> bool:
        """Whether the clients send it again after a reconnect: only wait,
        which changes nothing on the daemon (the others raise
        DaemonUnavailable, as a submit whose answer was lost may have been
        done)."""
        return self.method == "wait"

    def again(self, elapsed: float) -> "Call[R]":
        """The call to send on a new connection, ``elapsed`` seconds after
        the first was sent: a wait with a timeout gets what is left of it."""
        if self.wait_timeout is None or self.params is None:
            return self
        left = max(0.0, self.wait_timeout - elapsed)
        params = dict(self.params)
        params["timeout"] = left
        return replace(self, params=params, wait_for=left, wait_timeout=left)


def submit(argv: Sequence[str | bytes], *,
           priority: str | None = None,
           name: str | None = None,
           env: Mapping[str, str | bytes] | None = None,
           cwd: str | bytes | os.PathLike[str] | None = None,
           timeout: float | None = None,
           retries: int | None = None,
           after: Sequence[int] | None = None,
           labels: Mapping[str, str] | None = None,
           memory: int | None = None,
           resources: Mapping[str, int] | None = None,
           hold: bool | None = None,
           slots: int | None = None,
           exclusive: bool | None = None,
           nice: int | None = None,
           merge_output: bool | None = None,
           begin_at: str | None = None,
           after_any: Sequence[int] | None = None,
           node: str | None = None,
           key: str | None = None,
           **extra: Any) -> Call[Job]:
    """Queues a job running ``argv`` (no shell) and returns it, once it
    is on disk. Every param is the protocol's of the same name.

    As the CLI does, the job gets this process's environment and working
    directory unless ``env``/``cwd`` say otherwise: ``env`` is then the
    job's whole environment; pass DAEMON_DEFAULT to let the daemon choose
    (a minimal environment; the user's home directory). ``hold=True``
    submits it held. ``key`` (1 to 256 bytes) makes the submit
    idempotent: while a job the same user submitted with that key is kept,
    another submit with it creates nothing and returns that job, with
    ``existing`` True. ``extra`` params are sent as they are, for params
    newer than this client.
    """

    if env is DAEMON_DEFAULT:
        env_param = None
    elif env is None:
        env_param = caller_env()
    else:
        env_param = {k: encode_bytes(v) for k, v in env.items()}
    if cwd is DAEMON_DEFAULT:
        cwd_param = None
    elif cwd is None:
        cwd_param = caller_cwd()
    else:
        cwd_param = encode_bytes(os.fspath(cwd))
    params = params_of(
        argv=[encode_bytes(a) for a in argv], priority=priority,
        name=name, env=env_param, cwd=cwd_param, timeout=timeout,
        retries=retries, after=None if after is None else builtins.list(after),
        labels=None if labels is None else dict(labels), memory=memory,
        resources=None if resources is None else dict(resources),
        hold=hold, slots=slots, exclusive=exclusive, nice=nice,
        merge_output=merge_output, begin_at=begin_at,
        after_any=None if after_any is None else builtins.list(after_any),
        node=node, key=key)
    params.update(extra)
    return Call("submit", params, _job)


def get(id: int) -> Call[Job]:
    """The job ``id``; NoSuchJob when there is none."""
    return Call("get", {"id": id}, _job)


def _jobs(result: Any) -> builtins.list[Job]:
    return [Job.from_dict(j) for j in result.get("jobs", [])]


def list(*, state: Sequence[str] | str | None = None,
         priority: str | None = None,
         labels: Mapping[str, str] | None = None,
         name: str | None = None,
         held: bool | None = None,
         limit: int | None = None,
         after_id: int | None = None) -> Call[builtins.list[Job]]:
    """Jobs of every user in submission order, filtered by the params
    given: one page of at most ``limit`` (the daemon's default 1000);
    pass the last id as ``after_id`` for the next page."""
    if isinstance(state, str):
        state = [state]
    return Call("list", params_of(
        state=None if state is None else builtins.list(state),
        priority=priority, labels=None if labels is None else dict(labels),
        name=name, held=held, limit=limit, after_id=after_id), _jobs)


def wait(id: int, timeout: float | None = None) -> Call[Job]:
    """Waits until job ``id`` has ended, or ``timeout`` seconds, and
    returns it as it is then (check ``job.terminal``)."""
    # The reply legitimately takes up to the wait's own timeout.
    return Call("wait", params_of(id=id, timeout=timeout), _job,
                wait_for=timeout, wait_timeout=timeout)


def wait_all(ids: Sequence[int],
             timeout: float | None = None) -> Call[builtins.list[Job]]:
    """As wait, for every job of ``ids``: their list, in that order."""
    return Call("wait", params_of(ids=builtins.list(ids), timeout=timeout),
                _jobs, wait_for=timeout, wait_timeout=timeout)


def _ids(result: Any) -> builtins.list[int]:
    return builtins.list(result.get("ids", []))


def _act(method: str, id: int | None, filter: Filter | None,
         **more: Any) -> Call[Job | builtins.list[int]]:
    """The methods that take ``id`` or ``filter`` (SELECTING MANY JOBS):
    a Job for an id, the ids acted on for a filter."""
    if (id is None) == (filter is None):
        raise TypeError(f"{method}: give one of id and filter")
    decode: Callable[[Any], Job | builtins.list[int]] = _job
    if filter is not None:
        decode = _ids
    return Call(method, params_of(
        id=id, filter=None if filter is None else dict(filter), **more),
        decode)


def cancel(id: int | None = None, *, filter: Filter | None = None,
           signal: str | None = None) -> Call[Job | builtins.list[int]]:
    """Cancels job ``id`` (returns it; a running one may still show
    running) or every job ``filter`` selects (returns their ids).
    ``signal`` goes first to a running job, SIGTERM by default."""
    return _act("cancel", id, filter, signal=signal)


def hold(id: int | None = None, *, filter: Filter | None = None) -> Call[Job | builtins.list[int]]:
    """Holds a queued job: it keeps its place but does not start."""
    return _act("hold", id, filter)


def release(id: int | None = None, *, filter: Filter | None = None) -> Call[Job | builtins.list[int]]:
    """Releases a held job back to its place in its queue."""
    return _act("release", id, filter)


def retry(id: int | None = None, *, filter: Filter | None = None) -> Call[Job | builtins.list[int]]:
    """Queues an ended (not succeeded) job again as a new attempt;
    WrongState for a queued, running or succeeded one."""
    return _act("retry", id, filter)


def freeze(id: int | None = None, *, filter: Filter | None = None) -> Call[Job | builtins.list[int]]:
    """Freezes a running job's processes (its timeout clock stops)."""
    return _act("freeze", id, filter)


def thaw(id: int | None = None, *, filter: Filter | None = None) -> Call[Job | builtins.list[int]]:
    """Thaws a frozen job."""
    return _act("thaw", id, filter)


def remove(id: int | None = None, *, filter: Filter | None = None) -> Call[builtins.list[int]]:
    """Deletes ended jobs and their output; returns the ids removed.
    WrongState for a job given by id that has not ended."""
    if (id is None) == (filter is None):
        raise TypeError("remove: give one of id and filter")
    return Call("remove", params_of(
        id=id, filter=None if filter is None else dict(filter)), _ids)


def update(id: int, *, priority: str | None = None,
           name: str | None = None, timeout: float | None = None,
           retries: int | None = None,
           labels: Mapping[str, str] | None = None,
           begin_at: str | None = _UNSET, nice: int | None = None,
           memory: int | None = None,
           resources: Mapping[str, int] | None = None) -> Call[Job]:
    """Changes a queued job (WrongState otherwise) and returns it.
    ``labels`` and ``resources`` replace the whole object; ``begin_at``
    None lets a job waiting for its begin_at go at once."""
    params = params_of(id=id, priority=priority, name=name, timeout=timeout,
                       retries=retries,
                       labels=None if labels is None else dict(labels),
                       nice=nice, memory=memory,
                       resources=None if resources is None else dict(resources))
    if begin_at is not _UNSET:
        params["begin_at"] = begin_at
    return Call("update", params, _job)


def _dict(result: Any) -> dict[str, Any]:
    return dict(result)


def stats() -> Call[dict[str, Any]]:
    """The daemon's figures: the stats object of the protocol."""
    return Call("stats", None, _dict)


def pause(priority: str | None = None) -> Call[dict[str, Any]]:
    """Pauses a priority, or all of them (admins only); returns stats."""
    return Call("pause", params_of(priority=priority), _dict)


def resume(priority: str | None = None) -> Call[dict[str, Any]]:
    """Resumes a priority, or all of them (admins only); returns stats."""
    return Call("resume", params_of(priority=priority), _dict)


def reload() -> Call[None]:
    """Reloads the daemon's config (admins only); ConfigRejected, with
    ``errors``, when the new config is wrong and the old one stays."""
    return Call("reload", None, _nothing)


# -- output -------------------------------------------------------------------

class OutputCursor:
    """Where an ``output`` reading is: the params of the next page, and
    what a page read means (new bytes, the end, or nothing new yet).

    When a retry starts a new attempt, following starts again at 0 of the
    new attempt's streams, as the protocol says a follower must.
    """

    def __init__(self, id: int, stream: str, offset: int,
                 limit: int | None) -> None:
        self.id, self.stream, self.offset, self.limit = id, stream, offset, limit
        self.attempt: Any = None
        self.done = False

    def call(self) -> Call[Any]:
        return Call("output", params_of(id=self.id, stream=self.stream,
                                        offset=self.offset, limit=self.limit))

    def feed(self, page: Any) -> bytes | None:
        """Takes one page: its bytes (maybe empty), or None when the page
        is of an older attempt and must be asked for again from 0.
        ``done`` is set once the end was read."""
        if self.attempt is not None and page.get("attempt") != self.attempt:
            self.attempt, self.offset = page.get("attempt"), 0
            return None
        self.attempt = page.get("attempt")
        data = page.get("data", "")
        if page.get("encoding") == "base64":
            try:
                chunk = base64.b64decode(data, validate=True)
            except (binascii.Error, ValueError) as exc:
                raise ProtocolError(None, f"bad base64 output: {exc}")
        else:
            chunk = data.encode("utf-8")
        self.offset = page.get("next_offset", self.offset + len(chunk))
        if page.get("eof"):
            self.done = True
        return chunk


# -- watch --------------------------------------------------------------------

def watch_params(ids: Sequence[int] | None, priority: str | None) -> dict[str, Any]:
    return params_of(ids=None if ids is None else builtins.list(ids),
                     priority=priority)


def event_of(message: Any) -> Event | None:
    """The Event a watch connection's message is, or None for a message
    that is not a notification (a late reply)."""
    if not isinstance(message, dict) or "id" in message:
        return None
    method = message.get("method")
    params = message.get("params")
    job = (Job.from_dict(params)
           if method == "job" and isinstance(params, dict)
           and "id" in params else None)
    return Event(method=str(method), job=job, params=params)
