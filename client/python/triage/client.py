"""The synchronous client of triaged: one method per protocol method, over
one connection shared safely by threads (watch gets a connection of its own)."""

from __future__ import annotations

import base64
import builtins
import binascii
import itertools
import os
import threading
import time
from typing import Any, Iterator, Mapping, Sequence

from ._wire import Connection, caller_cwd, caller_env, encode_bytes, socket_path
from .errors import DaemonUnavailable, ProtocolError, TriageError, error_from_reply
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
_FOLLOW_POLL = 0.25

Filter = Mapping[str, Any]


def _params(**kwargs: Any) -> dict[str, Any]:
    """The params given, leaving out those not given (None or _UNSET):
    the daemon refuses null for most params, and applies its default to a
    param left out."""
    return {k: v for k, v in kwargs.items() if v is not None and v is not _UNSET}


class Client:
    """A connection to triaged, speaking JSON-RPC 2.0 as triage-protocol(7)
    describes it.

    ``socket`` is the daemon's socket path; without it, ``$TRIAGE_SOCKET``
    when not empty, else the user's own daemon's under ``$XDG_RUNTIME_DIR``
    when there is one, else ``/run/triage/triage.sock`` (the CLI's order).
    ``timeout`` bounds, in seconds, connecting and each reply (TimeoutError
    past it); ``wait`` and a following ``output`` add their own waiting time
    to it. None waits as long as it takes.

    The client connects when made, and is a context manager that closes the
    connection on exit. Errors of the daemon raise the TriageError subclass
    of their code; a socket that cannot be reached raises DaemonUnavailable.

    Thread safety: one Client may be shared by any number of threads. Sends
    are serialised by a lock, and replies are matched to requests by id, one
    thread at a time reading for all of them; so a thread blocked in ``wait``
    does not hold up another's ``get``, as the protocol serves other requests
    while a wait is pending. ``watch`` opens a connection of its own, since
    its notifications run until that connection closes.
    """

    def __init__(self, socket: str | os.PathLike[str] | None = None,
                 timeout: float | None = None) -> None:
        self.socket_path = socket_path(socket)
        self.timeout = timeout
        self._conn = Connection(self.socket_path, timeout)
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._replies: dict[int, dict[str, Any]] = {}
        # Requests given up on (timed out): their late replies are dropped.
        self._abandoned: set[int] = set()
        self._reading = False
        self._broken: BaseException | None = None

    # -- life cycle ---------------------------------------------------------

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Closes the connection. Requests pending in other threads fail
        with DaemonUnavailable."""
        self._conn.close()

    # -- the request machinery ----------------------------------------------

    def call(self, method: str, params: Mapping[str, Any] | None = None, *,
             wait_for: float | None = 0.0) -> Any:
        """Sends one request and returns its result, or raises its error.

        The escape hatch for methods and params this class does not name.
        ``wait_for`` is how long the daemon may legitimately take on top of
        the client's timeout (None: no bound at all).
        """
        deadline = None
        if self.timeout is not None and wait_for is not None:
            deadline = time.monotonic() + self.timeout + wait_for
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params:
            message["params"] = dict(params)
        with self._lock:
            if self._broken is not None:
                raise DaemonUnavailable(f"connection to {self.socket_path} "
                                        f"lost: {self._broken}",
                                        self.socket_path)
            rid = next(self._ids)
            message["id"] = rid
            self._conn.send(message)
        reply = self._reply(rid, deadline)
        if "error" in reply:
            raise error_from_reply(reply["error"])
        if "result" not in reply:
            raise ProtocolError(None, f"reply to {method} without result")
        return reply["result"]

    def _reply(self, rid: int, deadline: float | None) -> dict[str, Any]:
        """The reply of request rid. Whichever waiting thread is free reads
        the connection for all of them and files what it reads by id."""
        while True:
            with self._cond:
                while True:
                    if rid in self._replies:
                        return self._replies.pop(rid)
                    if self._broken is not None:
                        raise DaemonUnavailable(
                            f"connection to {self.socket_path} lost: "
                            f"{self._broken}", self.socket_path)
                    if not self._reading:
                        break
                    left = None if deadline is None else deadline - time.monotonic()
                    if left is not None and left <= 0:
                        self._abandoned.add(rid)
                        raise TimeoutError(f"no reply from triaged in time "
                                           f"(request {rid})")
                    self._cond.wait(left)
                self._reading = True
            try:
                message = self._conn.read(deadline)
            except TimeoutError:
                with self._cond:
                    self._reading = False
                    self._abandoned.add(rid)
                    self._cond.notify_all()
                raise
            except BaseException as exc:
                with self._cond:
                    self._reading = False
                    self._broken = exc
                    self._cond.notify_all()
                raise
            with self._cond:
                self._reading = False
                self._file(message)
                self._cond.notify_all()

    def _file(self, message: Any) -> None:
        """Files one message read on the shared connection (lock held)."""
        replies = message if isinstance(message, builtins.list) else [message]
        for reply in replies:
            if not isinstance(reply, dict):
                continue
            rid = reply.get("id")
            if isinstance(rid, int) and rid not in self._abandoned:
                self._replies[rid] = reply
            elif isinstance(rid, int):
                self._abandoned.discard(rid)
            elif rid is None and "error" in reply:
                # An error with a null id answers no request we can name
                # (the daemon could not read one): every waiter must know,
                # and the connection may be closing (max_request).
                self._broken = error_from_reply(reply["error"])
            # Notifications (no id) do not come here: this connection
            # never asks for watch.

    # -- jobs ---------------------------------------------------------------

    def submit(self, argv: Sequence[str | bytes], *,
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
               **extra: Any) -> Job:
        """Queues a job running ``argv`` (no shell) and returns it, once it
        is on disk. Every param is the protocol's of the same name.

        As the CLI does, the job gets this process's environment and working
        directory unless ``env``/``cwd`` say otherwise: ``env`` is then the
        job's whole environment; pass DAEMON_DEFAULT to let the daemon choose
        (a minimal environment; the user's home directory). ``hold=True``
        submits it held. ``extra`` params are sent as they are, for params
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
        params = _params(
            argv=[encode_bytes(a) for a in argv], priority=priority,
            name=name, env=env_param, cwd=cwd_param, timeout=timeout,
            retries=retries, after=None if after is None else builtins.list(after),
            labels=None if labels is None else dict(labels), memory=memory,
            resources=None if resources is None else dict(resources),
            hold=hold, slots=slots, exclusive=exclusive, nice=nice,
            merge_output=merge_output, begin_at=begin_at,
            after_any=None if after_any is None else builtins.list(after_any),
            node=node)
        params.update(extra)
        return Job.from_dict(self.call("submit", params))

    def get(self, id: int) -> Job:
        """The job ``id``; NoSuchJob when there is none."""
        return Job.from_dict(self.call("get", {"id": id}))

    def list(self, *, state: Sequence[str] | str | None = None,
             priority: str | None = None,
             labels: Mapping[str, str] | None = None,
             name: str | None = None,
             held: bool | None = None,
             limit: int | None = None,
             after_id: int | None = None) -> builtins.list[Job]:
        """Jobs of every user in submission order, filtered by the params
        given: one page of at most ``limit`` (the daemon's default 1000);
        pass the last id as ``after_id`` for the next page."""
        if isinstance(state, str):
            state = [state]
        result = self.call("list", _params(
            state=None if state is None else builtins.list(state),
            priority=priority, labels=None if labels is None else dict(labels),
            name=name, held=held, limit=limit, after_id=after_id))
        return [Job.from_dict(j) for j in result.get("jobs", [])]

    def wait(self, id: int | None = None, timeout: float | None = None, *,
             ids: Sequence[int] | None = None) -> Any:
        """Waits until job ``id`` has ended, or ``timeout`` seconds, and
        returns it as it is then (check ``job.terminal``). With ``ids``
        instead, waits for all of them and returns their list, in order."""
        params = _params(id=id, timeout=timeout,
                         ids=None if ids is None else builtins.list(ids))
        # The reply legitimately takes up to the wait's own timeout.
        result = self.call("wait", params, wait_for=timeout)
        if ids is not None:
            return [Job.from_dict(j) for j in result.get("jobs", [])]
        return Job.from_dict(result)

    def _act(self, method: str, id: int | None, filter: Filter | None,
             **more: Any) -> Any:
        """The methods that take ``id`` or ``filter`` (SELECTING MANY JOBS):
        a Job for an id, the ids acted on for a filter."""
        if (id is None) == (filter is None):
            raise TypeError(f"{method}: give one of id and filter")
        result = self.call(method, _params(
            id=id, filter=None if filter is None else dict(filter), **more))
        if filter is not None:
            return builtins.list(result.get("ids", []))
        return Job.from_dict(result)

    def cancel(self, id: int | None = None, *, filter: Filter | None = None,
               signal: str | None = None) -> Any:
        """Cancels job ``id`` (returns it; a running one may still show
        running) or every job ``filter`` selects (returns their ids).
        ``signal`` goes first to a running job, SIGTERM by default."""
        return self._act("cancel", id, filter, signal=signal)

    def hold(self, id: int | None = None, *,
             filter: Filter | None = None) -> Any:
        """Holds a queued job: it keeps its place but does not start."""
        return self._act("hold", id, filter)

    def release(self, id: int | None = None, *,
                filter: Filter | None = None) -> Any:
        """Releases a held job back to its place in its queue."""
        return self._act("release", id, filter)

    def retry(self, id: int | None = None, *,
              filter: Filter | None = None) -> Any:
        """Queues an ended (not succeeded) job again as a new attempt;
        WrongState for a queued, running or succeeded one."""
        return self._act("retry", id, filter)

    def freeze(self, id: int | None = None, *,
               filter: Filter | None = None) -> Any:
        """Freezes a running job's processes (its timeout clock stops)."""
        return self._act("freeze", id, filter)

    def thaw(self, id: int | None = None, *,
             filter: Filter | None = None) -> Any:
        """Thaws a frozen job."""
        return self._act("thaw", id, filter)

    def remove(self, id: int | None = None, *,
               filter: Filter | None = None) -> builtins.list[int]:
        """Deletes ended jobs and their output; returns the ids removed.
        WrongState for a job given by id that has not ended."""
        if (id is None) == (filter is None):
            raise TypeError("remove: give one of id and filter")
        result = self.call("remove", _params(
            id=id, filter=None if filter is None else dict(filter)))
        return builtins.list(result.get("ids", []))

    def update(self, id: int, *, priority: str | None = None,
               name: str | None = None, timeout: float | None = None,
               retries: int | None = None,
               labels: Mapping[str, str] | None = None,
               begin_at: str | None = _UNSET, nice: int | None = None,
               memory: int | None = None,
               resources: Mapping[str, int] | None = None) -> Job:
        """Changes a queued job (WrongState otherwise) and returns it.
        ``labels`` and ``resources`` replace the whole object; ``begin_at``
        None lets a job waiting for its begin_at go at once."""
        params = _params(id=id, priority=priority, name=name, timeout=timeout,
                         retries=retries,
                         labels=None if labels is None else dict(labels),
                         nice=nice, memory=memory,
                         resources=None if resources is None else dict(resources))
        if begin_at is not _UNSET:
            params["begin_at"] = begin_at
        return Job.from_dict(self.call("update", params))

    def output(self, id: int, stream: str = "stdout", follow: bool = False, *,
               offset: int = 0, limit: int | None = None) -> Iterator[bytes]:
        """What job ``id`` wrote to ``stream`` ("stdout" or "stderr"), as
        chunks of bytes, page by page from ``offset`` (negative: that many
        bytes before the end).

        Without ``follow`` it stops at the end of what is stored now; with
        it, it goes on until the job has ended and all of it was read. When
        a retry starts a new attempt, following starts again at 0 of the new
        attempt's streams, as the protocol says a follower must.
        """
        attempt = None
        while True:
            page = self.call("output", _params(id=id, stream=stream,
                                                offset=offset, limit=limit))
            if attempt is not None and page.get("attempt") != attempt:
                attempt, offset = page.get("attempt"), 0
                continue
            attempt = page.get("attempt")
            data = page.get("data", "")
            if page.get("encoding") == "base64":
                try:
                    chunk = base64.b64decode(data, validate=True)
                except (binascii.Error, ValueError) as exc:
                    raise ProtocolError(None, f"bad base64 output: {exc}")
            else:
                chunk = data.encode("utf-8")
            if chunk:
                yield chunk
            offset = page.get("next_offset", offset + len(chunk))
            if page.get("eof"):
                return
            if not chunk:
                if not follow:
                    return
                # Nothing new: let the job run a little, and come back at
                # once if it ends (wait answers then).
                self.wait(id, timeout=_FOLLOW_POLL)

    def watch(self, ids: Sequence[int] | None = None,
              priority: str | None = None) -> "Watch":
        """A Watch: an iterator of Events, one for each creation, state
        change and edit of a matching job, from now until it is closed.
        It has a connection of its own; use it as a context manager."""
        return Watch(self.socket_path, self.timeout, ids=ids, priority=priority)

    # -- the daemon ---------------------------------------------------------

    def stats(self) -> dict[str, Any]:
        """The daemon's figures: the stats object of the protocol."""
        return dict(self.call("stats"))

    def pause(self, priority: str | None = None) -> dict[str, Any]:
        """Pauses a priority, or all of them (admins only); returns stats."""
        return dict(self.call("pause", _params(priority=priority)))

    def resume(self, priority: str | None = None) -> dict[str, Any]:
        """Resumes a priority, or all of them (admins only); returns stats."""
        return dict(self.call("resume", _params(priority=priority)))

    def reload(self) -> None:
        """Reloads the daemon's config (admins only); ConfigRejected, with
        ``errors``, when the new config is wrong and the old one stays."""
        self.call("reload")


class Watch:
    """The notifications of one watch, on a connection of its own.

    Iterate it for Events; each read waits as long as it takes (a watch is
    quiet while nothing changes). Closing it (or leaving its ``with``)
    closes the connection, which is what ends a watch on the daemon's side.
    More filters can be added with ``add``. Not for sharing between threads:
    one consumer reads the events.
    """

    def __init__(self, path: str, timeout: float | None, *,
                 ids: Sequence[int] | None = None,
                 priority: str | None = None) -> None:
        self._conn = Connection(path, timeout)
        self._timeout = timeout
        self._ids = itertools.count(1)
        # Notifications that came while add() waited for its reply.
        self._early: builtins.list[Any] = []
        try:
            self.add(ids=ids, priority=priority)
        except BaseException:
            self._conn.close()
            raise

    def add(self, ids: Sequence[int] | None = None,
            priority: str | None = None) -> None:
        """One more watch on this connection: events of jobs it matches
        too (a job several match is sent once)."""
        rid = next(self._ids)
        self._conn.send({"jsonrpc": "2.0", "id": rid, "method": "watch",
                         "params": _params(ids=None if ids is None else builtins.list(ids),
                                           priority=priority)})
        deadline = None if self._timeout is None else time.monotonic() + self._timeout
        while True:
            message = self._conn.read(deadline)
            if isinstance(message, dict) and message.get("id") == rid:
                if "error" in message:
                    raise error_from_reply(message["error"])
                return
            if isinstance(message, dict) and "error" in message:
                raise error_from_reply(message["error"])
            self._early.append(message)

    def __enter__(self) -> "Watch":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Ends the watch: closes its connection."""
        self._conn.close()

    def __iter__(self) -> Iterator[Event]:
        return self

    def __next__(self) -> Event:
        return self.next()

    def next(self, timeout: float | None = None) -> Event:
        """The next event; TimeoutError after ``timeout`` seconds without
        one (None: wait as long as it takes); StopIteration once closed."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if self._early:
                message = self._early.pop(0)
            elif self._conn.closed:
                raise StopIteration
            else:
                try:
                    message = self._conn.read(deadline)
                except DaemonUnavailable:
                    # The daemon went away: the watch is over.
                    raise StopIteration from None
            if not isinstance(message, dict) or "id" in message:
                if isinstance(message, dict) and "error" in message:
                    raise error_from_reply(message["error"])
                continue
            method = message.get("method")
            params = message.get("params")
            job = (Job.from_dict(params)
                   if method == "job" and isinstance(params, dict)
                   and "id" in params else None)
            return Event(method=str(method), job=job, params=params)
