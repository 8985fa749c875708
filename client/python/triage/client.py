"""The synchronous client of triaged: one method per protocol method, over
one connection shared safely by threads (watch gets a connection of its own)."""

from __future__ import annotations

import builtins
import functools
import itertools
import os
import threading
import time
from typing import Any, Callable, Iterator, Mapping, Sequence

from . import _calls
from ._calls import DAEMON_DEFAULT, FOLLOW_POLL, Call, OutputCursor
from ._wire import Connection, socket_path
from .errors import DaemonUnavailable, ProtocolError, error_from_reply
from .job import Event

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


def _sync_method(name: str) -> Callable[..., Any]:
    builder = getattr(_calls, name)

    @functools.wraps(builder)
    def method(self: "Client", *args: Any, **kwargs: Any) -> Any:
        return self._perform(builder(*args, **kwargs))

    del method.__wrapped__
    method.__signature__ = _calls.method_signature(  # type: ignore[attr-defined]
        builder, Any)
    return method


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
            if self._broken is not None:
                raise self._lost(self._broken)
            rid = next(self._ids)
            message["id"] = rid
            self._waiting.add(rid)
            try:
                self._conn.send(message)
            except BaseException:
                self._waiting.discard(rid)
                raise
        reply = self._reply(rid, deadline)
        if "error" in reply:
            raise error_from_reply(reply["error"])
        if "result" not in reply:
            raise ProtocolError(None, f"reply to {method} without result")
        return reply["result"]

    def _perform(self, call: Call) -> Any:
        """Makes one Call; a wait is made again on a new connection when
        the old one drops, up to ``reconnect`` seconds of outage."""
        start = time.monotonic()
        this = call
        while True:
            conn = self._conn
            try:
                return this.decode(self.call(this.method, this.params,
                                             wait_for=this.wait_for))
            except DaemonUnavailable as exc:
                if not call.redoable or self.reconnect <= 0 or self._closed:
                    raise
                self._redial(conn, exc)
            this = call.again(time.monotonic() - start)

    def _redial(self, old: Connection, why: BaseException) -> None:
        """Replaces the lost connection old by a new one (unless another
        thread did already). Requests still pending on old fail."""
        with self._redial_lock:
            if self._conn is not old:
                return
            old.close()
            new = redial(self.socket_path, self.timeout, self.reconnect, why)
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
                        return reply
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
        lost = self._lost(exc)
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
                # An error with a null id answers no request we can name
                # (the daemon could not read one): every waiter must know,
                # and the connection may be closing (max_request).
                self._fail(error_from_reply(reply["error"]))
            # Notifications (no id) do not come here: this connection
            # never asks for watch.

    # -- jobs and the daemon: built in _calls, the same for AsyncClient -----

    submit = _sync_method("submit")
    get = _sync_method("get")
    list = _sync_method("list")
    wait = _sync_method("wait")
    cancel = _sync_method("cancel")
    hold = _sync_method("hold")
    release = _sync_method("release")
    retry = _sync_method("retry")
    freeze = _sync_method("freeze")
    thaw = _sync_method("thaw")
    remove = _sync_method("remove")
    update = _sync_method("update")
    stats = _sync_method("stats")
    pause = _sync_method("pause")
    resume = _sync_method("resume")
    reload = _sync_method("reload")

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
                self._redial(conn, exc)

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
