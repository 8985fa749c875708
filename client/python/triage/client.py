"""The synchronous client of triaged: one method per protocol method, over
one connection shared safely by threads (watch gets a connection of its own)."""

from __future__ import annotations

import builtins
import itertools
import os
import threading
import time
from typing import Any, Iterator, Mapping, Sequence, overload

from . import _calls
from ._calls import _UNSET, R, DAEMON_DEFAULT, FOLLOW_POLL, Call, Filter, OutputCursor
from ._wire import Connection, socket_path
from .errors import DaemonUnavailable, ProtocolError, _NotSent, error_from_reply
from .job import Event, Job

__all__ = ["Client", "Watch", "DAEMON_DEFAULT"]


def redial(path: str, timeout: float | None, limit: float,
           first: BaseException | None = None) -> Connection:
    """A new connection to path, trying again with backoff while the daemon
    is away (socket missing or refusing), for up to ``limit`` seconds."""
    give_up = time.monotonic() + limit
    last = first
    for pause in _calls.backoff():
        try:
            return Connection(path, timeout)
        except DaemonUnavailable as exc:
            if not _calls.daemon_away(exc):
                raise
            last = exc
        left = give_up - time.monotonic()
        if left <= 0:
            raise _calls.gave_up(path, limit, last)
        time.sleep(min(pause, left))
    raise AssertionError("unreachable")


class Client:
    """A connection to triaged, speaking JSON-RPC 2.0 as triage-protocol(7)
    describes it.

    ``socket`` is the daemon's socket path; without it, ``$TRIAGE_SOCKET``
    when not empty, else the user's own daemon's under ``$XDG_RUNTIME_DIR``
    when there is one, else ``/run/triage/triage.sock`` (the CLI's order).
    ``timeout`` bounds, in seconds, connecting and each reply (TimeoutError
    past it); ``wait`` and a following ``output`` add their own waiting time
    to it. None waits as long as it takes.

    ``reconnect`` is how many seconds ``wait``, ``output(follow=True)`` and
    ``watch`` keep trying to reach the daemon again when the connection
    drops (a restart of the daemon), as the CLI does: default
    ``$TRIAGE_RECONNECT``, else 300; 0 turns it off. They connect again
    with backoff (50 ms doubling to 2 s) and resume. Every other method
    raises DaemonUnavailable when the connection is lost (a submit whose
    reply was lost may have been done); once a wait has connected again,
    they use the new connection.

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
                 timeout: float | None = None, *,
                 reconnect: float | None = None) -> None:
        self.socket_path = socket_path(socket)
        self.timeout = timeout
        self.reconnect = _calls.reconnect_limit(reconnect)
        self._conn = Connection(self.socket_path, timeout)
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        # Requests sent on the current connection and not answered yet;
        # a reply to any other id (one given up on) is dropped.
        self._waiting: set[int] = set()
        # Replies, or the exception that ends a request, by id.
        self._replies: dict[int, Any] = {}
        # The connection some thread is reading now, or None.
        self._reading: Connection | None = None
        self._broken: BaseException | None = None
        self._redial_lock = threading.Lock()
        self._closed = False

    # -- life cycle ---------------------------------------------------------

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Closes the connection. Requests pending in other threads fail
        with DaemonUnavailable."""
        self._closed = True
        self._conn.close()

    @property
    def pending(self) -> int:
        """How many requests are on the wire now, sent and not answered
        (a pending wait among them): for a view of the load, or to know a
        wait has gone out."""
        with self._lock:
            return len(self._waiting)

    # -- the request machinery ----------------------------------------------

    def call(self, method: str, params: Mapping[str, Any] | None = None, *,
             wait_for: float | None = 0.0) -> Any:
        """Sends one request and returns its result, or raises its error.

        The escape hatch for methods and params this class does not name.
        ``wait_for`` is how long the daemon may legitimately take on top of
        the client's timeout (None: no bound at all). It never reconnects.
        """
        deadline = None
        if self.timeout is not None and wait_for is not None:
            deadline = time.monotonic() + self.timeout + wait_for
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params:
            message["params"] = dict(params)
        with self._lock:
            if self._closed:
                raise DaemonUnavailable("the client is closed",
                                        self.socket_path)
            if self._broken is not None or self._conn.closed:
                raise _NotSent(f"connection to {self.socket_path} lost"
                               f"{': ' + str(self._broken) if self._broken else ''}",
                               self.socket_path)
            rid = next(self._ids)
            message["id"] = rid
            self._waiting.add(rid)
            try:
                self._conn.send(message)
            except DaemonUnavailable as exc:
                # Nothing of it reached a daemon that could read it (the
                # peer was gone: EPIPE), so it was not done.
                self._waiting.discard(rid)
                raise _NotSent(str(exc), self.socket_path) from exc
            except BaseException:
                self._waiting.discard(rid)
                raise
        reply = self._reply(rid, deadline)
        if "error" in reply:
            raise error_from_reply(reply["error"])
        if "result" not in reply:
            raise ProtocolError(None, f"reply to {method} without result")
        return reply["result"]

    def _perform(self, call: Call[R]) -> R:
        """Makes one Call. Reconnects only when the connection is lost
        (DaemonUnavailable), never on an error reply: a request found to
        have never gone out is sent once more on a new connection, one
        attempt to connect; a wait, which changes nothing, is made again
        on a new connection when the old one drops at any point, trying
        for up to ``reconnect`` seconds of outage."""
        start = time.monotonic()
        this = call
        resent = False
        while True:
            conn = self._conn
            try:
                return this.decode(self.call(this.method, this.params,
                                             wait_for=this.wait_for))
            except DaemonUnavailable as exc:
                if self._closed:
                    raise
                if call.redoable and self.reconnect > 0:
                    self._redial(conn, exc, self.reconnect)
                elif isinstance(exc, _NotSent) and not resent:
                    resent = True
                    self._redial(conn, exc, 0.0)
                else:
                    raise
            this = call.again(time.monotonic() - start)

    def _redial(self, old: Connection, why: BaseException,
                limit: float) -> None:
        """Replaces the lost connection old by a new one (unless another
        thread did already), trying for up to ``limit`` seconds while the
        daemon is away (0: once). Requests still pending on old fail."""
        with self._redial_lock:
            if self._conn is not old:
                return
            old.close()
            new = redial(self.socket_path, self.timeout, limit, why)
            with self._cond:
                lost = self._lost(why)
                for rid in self._waiting:
                    self._replies[rid] = lost
                self._waiting.clear()
                self._conn = new
                self._broken = None
                self._cond.notify_all()

    def _lost(self, why: BaseException) -> DaemonUnavailable:
        if isinstance(why, DaemonUnavailable):
            return why
        return DaemonUnavailable(f"connection to {self.socket_path} lost: "
                                 f"{why}", self.socket_path)

    def _reply(self, rid: int, deadline: float | None) -> dict[str, Any]:
        """The reply of request rid. Whichever waiting thread is free reads
        the connection for all of them and files what it reads by id."""
        while True:
            with self._cond:
                while True:
                    if rid in self._replies:
                        reply = self._replies.pop(rid)
                        if isinstance(reply, BaseException):
                            raise reply
                        return dict(reply)
                    conn = self._conn
                    if self._reading is not conn:
                        break
                    left = None if deadline is None else deadline - time.monotonic()
                    if left is not None and left <= 0:
                        self._waiting.discard(rid)
                        raise TimeoutError(f"no reply from triaged in time "
                                           f"(request {rid})")
                    self._cond.wait(left)
                self._reading = conn
            try:
                message = conn.read(deadline)
            except TimeoutError:
                with self._cond:
                    if self._reading is conn:
                        self._reading = None
                    self._waiting.discard(rid)
                    self._cond.notify_all()
                raise
            except BaseException as exc:
                with self._cond:
                    if self._reading is conn:
                        self._reading = None
                    if self._conn is conn:
                        self._fail(exc)
                    self._cond.notify_all()
                continue
            with self._cond:
                if self._reading is conn:
                    self._reading = None
                if self._conn is conn:
                    self._file(message)
                self._cond.notify_all()

    def _fail(self, exc: BaseException) -> None:
        """The current connection is of no more use (lock held): every
        request pending on it ends with exc."""
        self._broken = exc
        # Garbage from the daemon is told as such; anything else is a lost
        # connection, whatever broke it.
        lost = exc if isinstance(exc, ProtocolError) else self._lost(exc)
        for rid in self._waiting:
            self._replies[rid] = lost
        self._waiting.clear()

    def _file(self, message: Any) -> None:
        """Files one message read on the shared connection (lock held)."""
        replies = message if isinstance(message, builtins.list) else [message]
        for reply in replies:
            if not isinstance(reply, dict):
                continue
            rid = reply.get("id")
            if isinstance(rid, int) and rid in self._waiting:
                self._waiting.discard(rid)
                self._replies[rid] = reply
            elif rid is None and "error" in reply:
                # An error with a null id: the daemon could not read a
                # request (a NUL in a string, a line over max_request) or
                # refused the connection (max_clients_per_user). With one
                # request pending it is that one's answer; with several it
                # answers none we can name: they all fail, and the
                # connection, maybe closing, is given up for a new one.
                if len(self._waiting) == 1:
                    self._replies[self._waiting.pop()] = reply
                else:
                    self._fail(error_from_reply(reply["error"]))
                    self._conn.close()
            # Notifications (no id) do not come here: this connection
            # never asks for watch.

    # -- jobs and the daemon: the params built in _calls, shared with the
    # -- other client; each method's doc is the protocol's, shortened.

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
               key: str | None = None,
               hold: bool | None = None,
               slots: int | None = None,
               exclusive: bool | None = None,
               nice: int | None = None,
               merge_output: bool | None = None,
               begin_at: str | None = None,
               after_any: Sequence[int] | None = None,
               node: str | None = None,
               **extra: Any) -> Job:
        """Queues a job running ``argv`` (no shell) and returns it once it
        is on disk. Each param is the protocol's of the same name (see
        triage-protocol(7), submit); one not given takes the daemon's
        default.

        As the CLI does, the job gets this process's environment and
        working directory unless ``env``/``cwd`` say otherwise: ``env`` is
        then the job's whole environment; pass DAEMON_DEFAULT to let the
        daemon choose (a minimal environment; the user's home directory).
        ``timeout`` is in seconds, ``memory`` in bytes, ``resources`` maps
        a configured resource to a count of units, ``hold=True`` submits it
        held, ``begin_at`` is an RFC 3339 time.

        ``key`` (1 to 256 bytes) makes the submit idempotent: while a job
        this user submitted with the same key is kept, the submit creates
        nothing and returns that job, with ``existing`` True. ``extra``
        params are sent as they are, for params newer than this client.

        Raises InvalidParams naming the param at fault, QueueFull
        (``max_queued``), ShuttingDown, PermissionDenied. If the connection
        breaks before the reply, DaemonUnavailable: the job may or may not
        have been made (a ``key`` makes sending it again safe).
        """
        return self._perform(_calls.submit(
            argv, priority=priority, name=name, env=env, cwd=cwd,
            timeout=timeout, retries=retries, after=after, labels=labels,
            memory=memory, resources=resources, key=key, hold=hold,
            slots=slots, exclusive=exclusive, nice=nice,
            merge_output=merge_output, begin_at=begin_at,
            after_any=after_any, node=node, **extra))

    def get(self, id: int) -> Job:
        """The job ``id`` as it is now; NoSuchJob when there is none."""
        return self._perform(_calls.get(id))

    def list(self, *, state: Sequence[str] | str | None = None,
             priority: str | None = None,
             labels: Mapping[str, str] | None = None,
             name: str | None = None,
             held: bool | None = None,
             limit: int | None = None,
             after_id: int | None = None) -> builtins.list[Job]:
        """Jobs of every user in submission order, filtered by the params
        given (each state in ``state``; every pair of ``labels``): one page
        of at most ``limit`` (the daemon's default 1000); pass the last id
        as ``after_id`` for the next page."""
        return self._perform(_calls.list(
            state=state, priority=priority, labels=labels, name=name,
            held=held, limit=limit, after_id=after_id))

    def wait(self, id: int, timeout: float | None = None) -> Job:
        """Waits until job ``id`` has ended, or ``timeout`` seconds (None:
        as long as it takes), and returns it as it is then: check
        ``job.terminal``. Other requests on the client go on meanwhile.

        When the connection drops (the daemon restarts), the client
        connects again with backoff for up to ``reconnect`` seconds and
        waits again, for what is left of ``timeout``; past that,
        DaemonUnavailable. NoSuchJob for an id of no job."""
        return self._perform(_calls.wait(id, timeout))

    def wait_all(self, ids: Sequence[int],
                 timeout: float | None = None) -> builtins.list[Job]:
        """As wait, for every job of ``ids`` (1 to 100,000 ids): their
        list, in the order of ``ids``, each as its end left it or as it is
        at the timeout."""
        return self._perform(_calls.wait_all(ids, timeout))

    @overload
    def cancel(self, id: int, *, signal: str | None = None) -> Job: ...
    @overload
    def cancel(self, *, filter: Filter,
               signal: str | None = None) -> builtins.list[int]: ...

    def cancel(self, id: int | None = None, *, filter: Filter | None = None,
               signal: str | None = None) -> Job | builtins.list[int]:
        """Cancels job ``id`` and returns it (a running one may still show
        running until its process has exited), or every queued or running
        job ``filter`` selects (triage-protocol(7), SELECTING MANY JOBS) and
        returns their ids. ``signal`` ("SIGINT", "INT", "SIG10") goes first
        to a running job's process group; SIGTERM by default. Canceling an
        ended job returns it unchanged."""
        return self._perform(_calls.cancel(id, filter=filter, signal=signal))

    @overload
    def hold(self, id: int) -> Job: ...
    @overload
    def hold(self, *, filter: Filter) -> builtins.list[int]: ...

    def hold(self, id: int | None = None, *,
             filter: Filter | None = None) -> Job | builtins.list[int]:
        """Holds a queued job: it keeps its place but does not start until
        released. The job, or with ``filter`` the ids held."""
        return self._perform(_calls.hold(id, filter=filter))

    @overload
    def release(self, id: int) -> Job: ...
    @overload
    def release(self, *, filter: Filter) -> builtins.list[int]: ...

    def release(self, id: int | None = None, *,
                filter: Filter | None = None) -> Job | builtins.list[int]:
        """Releases a held job back to the place it had in its queue. The
        job, or with ``filter`` the ids released."""
        return self._perform(_calls.release(id, filter=filter))

    @overload
    def retry(self, id: int) -> Job: ...
    @overload
    def retry(self, *, filter: Filter) -> builtins.list[int]: ...

    def retry(self, id: int | None = None, *,
              filter: Filter | None = None) -> Job | builtins.list[int]:
        """Queues an ended job that did not succeed again, as a new attempt
        (WrongState for one queued, running or succeeded). The job, or with
        ``filter`` the ids retried."""
        return self._perform(_calls.retry(id, filter=filter))

    @overload
    def freeze(self, id: int) -> Job: ...
    @overload
    def freeze(self, *, filter: Filter) -> builtins.list[int]: ...

    def freeze(self, id: int | None = None, *,
               filter: Filter | None = None) -> Job | builtins.list[int]:
        """Freezes a running job's processes where they are (its timeout
        clock stops); it stays running, with ``job["frozen"]`` true. The
        job, or with ``filter`` the ids frozen."""
        return self._perform(_calls.freeze(id, filter=filter))

    @overload
    def thaw(self, id: int) -> Job: ...
    @overload
    def thaw(self, *, filter: Filter) -> builtins.list[int]: ...

    def thaw(self, id: int | None = None, *,
             filter: Filter | None = None) -> Job | builtins.list[int]:
        """Thaws a frozen job. The job, or with ``filter`` the ids
        thawed."""
        return self._perform(_calls.thaw(id, filter=filter))

    def remove(self, id: int | None = None, *,
               filter: Filter | None = None) -> builtins.list[int]:
        """Deletes ended jobs and their output for good; the ids removed.
        WrongState for a job given by ``id`` that has not ended."""
        return self._perform(_calls.remove(id, filter=filter))

    def update(self, id: int, *, priority: str | None = None,
               name: str | None = None, timeout: float | None = None,
               retries: int | None = None,
               labels: Mapping[str, str] | None = None,
               begin_at: str | None = _UNSET, nice: int | None = None,
               memory: int | None = None,
               resources: Mapping[str, int] | None = None) -> Job:
        """Changes a queued job (WrongState otherwise) and returns it once
        the change is on disk. ``labels`` and ``resources`` replace the
        whole object; ``begin_at=None`` lets a job waiting for its begin_at
        go at once."""
        return self._perform(_calls.update(
            id, priority=priority, name=name, timeout=timeout,
            retries=retries, labels=labels, begin_at=begin_at, nice=nice,
            memory=memory, resources=resources))

    def stats(self) -> dict[str, Any]:
        """The daemon's figures: the stats object of triage-protocol(7)
        (``slots``, ``priorities``, ``jobs`` by state, ``version``...)."""
        return self._perform(_calls.stats())

    def pause(self, priority: str | None = None) -> dict[str, Any]:
        """Pauses a priority, or every one: it takes submissions but starts
        nothing. Admins only (PermissionDenied). Returns the stats."""
        return self._perform(_calls.pause(priority))

    def resume(self, priority: str | None = None) -> dict[str, Any]:
        """Resumes a paused priority, or every one. Admins only. Returns
        the stats."""
        return self._perform(_calls.resume(priority))

    def reload(self) -> None:
        """Makes the daemon read its config again, as SIGHUP does. Admins
        only; ConfigRejected, with ``errors``, when the new config is wrong
        (the old one stays in force)."""
        return self._perform(_calls.reload())

    def output(self, id: int, stream: str = "stdout", follow: bool = False, *,
               offset: int = 0, limit: int | None = None) -> Iterator[bytes]:
        """What job ``id`` wrote to ``stream`` ("stdout" or "stderr"), as
        chunks of bytes, page by page from ``offset`` (negative: that many
        bytes before the end).

        Without ``follow`` it stops at the end of what is stored now; with
        it, it goes on until the job has ended and all of it was read. When
        a retry starts a new attempt, following starts again at 0 of the new
        attempt's streams, as the protocol says a follower must. Following
        survives a restart of the daemon (see ``reconnect``): it goes on
        from the offset reached.
        """
        cursor = OutputCursor(id, stream, offset, limit)
        while True:
            conn = self._conn
            try:
                chunk = cursor.feed(self._perform(cursor.call()))
                if chunk is None:
                    continue
                if chunk:
                    yield chunk
                if cursor.done or (not chunk and not follow):
                    return
                if not chunk:
                    # Nothing new: let the job run a little, and come back
                    # at once if it ends (wait answers then).
                    self._perform(_calls.wait(id, timeout=FOLLOW_POLL))
            except DaemonUnavailable as exc:
                if not follow or self.reconnect <= 0 or self._closed:
                    raise
                self._redial(conn, exc, self.reconnect)

    def watch(self, ids: Sequence[int] | None = None,
              priority: str | None = None) -> "Watch":
        """A Watch: an iterator of Events, one for each creation, state
        change and edit of a matching job, from now until it is closed.
        It has a connection of its own; use it as a context manager.

        When the daemon restarts, the watch connects again (see
        ``reconnect``) and asks for the same watches; the changes made
        while it was away are not sent again (the protocol does not replay
        them), so a consumer that must not miss an end checks with get or
        list after a gap.
        """
        return Watch(self.socket_path, self.timeout, ids=ids,
                     priority=priority, reconnect=self.reconnect)


class Watch:
    """The notifications of one watch, on a connection of its own.

    Iterate it for Events; each read waits as long as it takes (a watch is
    quiet while nothing changes). Closing it (or leaving its ``with``)
    closes the connection, which is what ends a watch on the daemon's side.
    More filters can be added with ``add``. Not for sharing between threads:
    one consumer reads the events.

    When the connection drops, it connects again with backoff for up to
    ``reconnect`` seconds and renews every watch it made; events of the gap
    are not replayed. Past that bound, DaemonUnavailable; with reconnect 0
    the iteration simply ends (StopIteration) when the daemon goes away.
    """

    def __init__(self, path: str, timeout: float | None, *,
                 ids: Sequence[int] | None = None,
                 priority: str | None = None,
                 reconnect: float | None = None) -> None:
        self._path = path
        self._conn = Connection(path, timeout)
        self._timeout = timeout
        self._reconnect = _calls.reconnect_limit(reconnect)
        self._ids = itertools.count(1)
        # The params of every watch made, to renew them on a new connection.
        self._watches: builtins.list[dict[str, Any]] = []
        # Notifications that came while add() waited for its reply.
        self._early: builtins.list[Any] = []
        self._closed = False
        try:
            self.add(ids=ids, priority=priority)
        except BaseException:
            self._conn.close()
            raise

    def add(self, ids: Sequence[int] | None = None,
            priority: str | None = None) -> None:
        """One more watch on this connection: events of jobs it matches
        too (a job several match is sent once)."""
        params = _calls.watch_params(ids, priority)
        self._subscribe(params)
        self._watches.append(params)

    def _subscribe(self, params: dict[str, Any]) -> None:
        rid = next(self._ids)
        self._conn.send({"jsonrpc": "2.0", "id": rid, "method": "watch",
                         "params": params})
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

    def _renew(self, why: BaseException) -> None:
        """A new connection, and every watch made again on it."""
        give_up = time.monotonic() + self._reconnect
        while True:
            left = max(0.0, give_up - time.monotonic())
            self._conn = redial(self._path, self._timeout, left, why)
            try:
                for params in self._watches:
                    self._subscribe(params)
                return
            except DaemonUnavailable as exc:
                # Broke again: a daemon on its way out. Try again.
                why = exc
                if time.monotonic() >= give_up:
                    raise _calls.gave_up(self._path, self._reconnect, exc)

    def __enter__(self) -> "Watch":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Ends the watch: closes its connection."""
        self._closed = True
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
            elif self._closed:
                raise StopIteration
            else:
                try:
                    message = self._conn.read(deadline)
                except DaemonUnavailable as exc:
                    if self._reconnect <= 0 or self._closed:
                        # The daemon went away: the watch is over.
                        raise StopIteration from None
                    self._renew(exc)
                    continue
            if isinstance(message, dict) and "id" in message and "error" in message:
                raise error_from_reply(message["error"])
            event = _calls.event_of(message)
            if event is not None:
                return event
