"""The asyncio client of triaged: the methods of Client as coroutines,
pipelined on one connection (many requests in flight, one reader task
matching replies to their futures by id)."""

from __future__ import annotations

import asyncio
import builtins
import collections
import itertools
import json
import os
import time
from typing import (Any, AsyncIterator, Awaitable, Callable, Mapping, Sequence,
                    TypeVar, overload)

from . import _calls
from ._calls import _UNSET, R, FOLLOW_POLL, Call, Filter, OutputCursor
from ._wire import _connect_message, decode_line, socket_path
from .errors import DaemonUnavailable, ProtocolError, _NotSent, error_from_reply
from .job import Event, Job

__all__ = ["AsyncClient", "AsyncWatch"]

# The longest line the reader takes (an output page is one line).
_LINE_LIMIT = 64 * 1024 * 1024
# Requests queued in one turn of the loop that go out in one write.
_CORK = 64


T = TypeVar("T")


async def _open(path: str, timeout: float | None
                ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A connection as streams (a watch's)."""
    return await _dial(path, timeout, asyncio.open_unix_connection(
        path, limit=_LINE_LIMIT))


async def _open_link(path: str, timeout: float | None) -> "_Link":
    """A connection as a _Link (the client's)."""
    loop = asyncio.get_running_loop()
    _, link = await _dial(path, timeout, loop.create_unix_connection(
        lambda: _Link(path), path))
    return link


async def _dial(path: str, timeout: float | None,
                connecting: Awaitable[T]) -> T:
    try:
        return await asyncio.wait_for(connecting, timeout)
    except OSError as exc:
        raise DaemonUnavailable(_connect_message(path, exc), path) from exc
    except asyncio.TimeoutError as exc:
        raise DaemonUnavailable(f"cannot connect to {path}: timed out",
                                path) from exc


async def _redial(path: str, timeout: float | None, limit: float,
                  first: BaseException | None,
                  opener: Callable[[str, float | None], Awaitable[T]]) -> T:
    """A new connection by opener, trying again with backoff while the
    daemon is away, for up to ``limit`` seconds (as client.redial)."""
    give_up = time.monotonic() + limit
    last = first
    for pause in _calls.backoff():
        try:
            return await opener(path, timeout)
        except DaemonUnavailable as exc:
            if not _calls.daemon_away(exc):
                raise
            last = exc
        left = give_up - time.monotonic()
        if left <= 0:
            raise _calls.gave_up(path, limit, last)
        await asyncio.sleep(min(pause, left))
    raise AssertionError("unreachable")


_ENCODER = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"))


def _encode(message: Any) -> bytes:
    return _ENCODER.encode(message).encode("ascii") + b"\n"


def _request(rid: int, method: str, params: Mapping[str, Any] | None) -> bytes:
    """A request's line, as _encode({"jsonrpc": "2.0", "id": rid, ...})
    would make it, its envelope formatted rather than encoded."""
    line = '{"jsonrpc":"2.0","id":%d,"method":%s' % (
        rid, _ENCODER.encode(method))
    if params:
        line += ',"params":' + _ENCODER.encode(params)
    return (line + "}\n").encode("ascii")


async def _read_message(reader: asyncio.StreamReader, path: str) -> Any:
    """The next message; DaemonUnavailable when the connection ends."""
    while True:
        try:
            line = await reader.readuntil(b"\n")
        except asyncio.IncompleteReadError:
            raise DaemonUnavailable(f"the daemon at {path} closed the "
                                    "connection", path) from None
        except asyncio.LimitOverrunError as exc:
            raise ProtocolError(None, f"a line over {_LINE_LIMIT} bytes "
                                "from the daemon") from exc
        except OSError as exc:
            raise DaemonUnavailable(f"lost the daemon at {path}: {exc}",
                                    path) from exc
        if line.strip():
            return decode_line(line)


class _Link(asyncio.Protocol):
    """One connection of an AsyncClient, as an asyncio protocol: the
    futures of the requests in flight on it, by id, each resolved as its
    reply's line arrives (no task, no await per line). Requests written in
    one turn of the loop go out together, in one write."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.pending: dict[int, asyncio.Future[Any]] = {}
        self.broken: BaseException | None = None
        self.transport: asyncio.WriteTransport | None = None
        self._loop = asyncio.get_running_loop()
        self._buf = b""
        self._out: builtins.list[bytes] = []
        self._paused: asyncio.Future[None] | None = None
        self._closed = self._loop.create_future()
        # The deadlines of requests under the client's plain timeout, in
        # the order sent, which is theirs: one timer for all, at the head.
        self._deadlines: collections.deque[
            tuple[float, asyncio.Future[Any], int]] = collections.deque()
        self._timer: asyncio.TimerHandle | None = None

    # -- asyncio.Protocol ---------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.WriteTransport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        if b"\n" not in data:
            self._buf += data
            if len(self._buf) > _LINE_LIMIT:
                self.fail(ProtocolError(None, f"a line over {_LINE_LIMIT} "
                                        "bytes from the daemon"))
            return
        lines = (self._buf + data).split(b"\n")
        self._buf = lines.pop()
        for line in lines:
            if self.broken is not None:
                return
            if not line.strip():
                continue
            try:
                message = decode_line(line)
            except ProtocolError as exc:
                self.fail(exc)
                return
            if isinstance(message, builtins.list):
                for reply in message:
                    self._file(reply)
            else:
                self._file(message)
        deadlines = self._deadlines
        while deadlines and deadlines[0][1].done():
            deadlines.popleft()

    def connection_lost(self, exc: Exception | None) -> None:
        self.fail(DaemonUnavailable(
            f"the daemon at {self.path} closed the connection"
            + (f": {exc}" if exc else ""), self.path))
        if not self._closed.done():
            self._closed.set_result(None)
        self._wake()

    def pause_writing(self) -> None:
        if self._paused is None:
            self._paused = self._loop.create_future()

    def resume_writing(self) -> None:
        self._wake()

    def _wake(self) -> None:
        paused, self._paused = self._paused, None
        if paused is not None and not paused.done():
            paused.set_result(None)

    # -- requests -------------------------------------------------------------

    def send(self, line: bytes) -> None:
        """Queues a request line: the loop's next turn writes those queued,
        or the _CORK-th at once, so that the daemon has work while the
        replies of a burst are still being read."""
        out = self._out
        if not out:
            self._loop.call_soon(self._flush)
        out.append(line)
        if len(out) >= _CORK:
            self._flush()

    def _flush(self) -> None:
        out, self._out = self._out, []
        if out and self.transport is not None and not self.transport.is_closing():
            self.transport.write(b"".join(out))

    def create_future(self) -> asyncio.Future[Any]:
        return self._loop.create_future()

    def call_later(self, delay: float, callback: Callable[..., None],
                   *args: Any) -> asyncio.TimerHandle:
        return self._loop.call_later(delay, callback, *args)

    async def drain(self) -> None:
        """Waits while the transport holds more than its high-water mark."""
        if self._paused is not None:
            await asyncio.shield(self._paused)

    def expire(self, limit: float, fut: asyncio.Future[Any],
               rid: int) -> asyncio.TimerHandle | None:
        """Fails fut with TimeoutError in ``limit`` seconds unless done
        by then. Returns a timer to cancel once fut is done, or None when
        fut joined the deadlines (done ones leave those as replies come)."""
        when = self._loop.time() + limit
        deadlines = self._deadlines
        if deadlines and when < deadlines[-1][0]:
            return self._loop.call_at(when, _time_out, fut, rid)
        deadlines.append((when, fut, rid))
        if self._timer is None:
            self._timer = self._loop.call_at(when, self._expire)
        return None

    def _expire(self) -> None:
        self._timer = None
        now = self._loop.time()
        deadlines = self._deadlines
        while deadlines and (deadlines[0][1].done() or deadlines[0][0] <= now):
            _, fut, rid = deadlines.popleft()
            _time_out(fut, rid)
        if deadlines:
            self._timer = self._loop.call_at(deadlines[0][0], self._expire)

    def _file(self, reply: Any) -> None:
        if not isinstance(reply, dict):
            return
        rid = reply.get("id")
        if isinstance(rid, int):
            fut = self.pending.pop(rid, None)
            if fut is not None and not fut.done():
                fut.set_result(reply)
        elif rid is None and "error" in reply:
            # The daemon could not read a request (a NUL in a string, a
            # line over max_request) or refused the connection: with one
            # request in flight it is that one's answer; with several it
            # answers none we can name, and they all fail (as Client).
            if len(self.pending) == 1:
                _, fut = self.pending.popitem()
                if not fut.done():
                    fut.set_result(reply)
            else:
                self.fail(error_from_reply(reply["error"]))

    def fail(self, exc: BaseException) -> None:
        """Ends the link: every request in flight fails."""
        if self.broken is None:
            self.broken = exc
        lost = (exc if isinstance(exc, (DaemonUnavailable, ProtocolError))
                else DaemonUnavailable(f"connection to {self.path} lost: "
                                       f"{exc}", self.path))
        for fut in self.pending.values():
            if not fut.done():
                fut.set_exception(lost)
        self.pending.clear()
        if self.transport is not None:
            self.transport.close()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._deadlines.clear()

    async def close(self) -> None:
        self.fail(DaemonUnavailable(f"connection to {self.path} closed",
                                    self.path))
        await self._closed


def _time_out(fut: asyncio.Future[Any], rid: int) -> None:
    if not fut.done():
        fut.set_exception(TimeoutError(f"no reply from triaged in time "
                                       f"(request {rid})"))


class AsyncClient:
    """An asyncio connection to triaged: the methods of Client, with the
    same params and results, as coroutines, and the same exceptions.

    Use it as ``async with AsyncClient() as c:`` (or await ``connect()``
    and ``close()``). ``socket``, ``timeout`` and ``reconnect`` are as
    Client's. Requests are pipelined: any number of tasks may await
    methods of one client at once, each request going out at once on the
    one connection and one reader task handing each reply to its future by
    id; so ``asyncio.gather(*(c.submit(...) for ...))`` has them all in
    flight together. ``output`` and ``watch`` are async iterators (a watch
    on a connection of its own).

    Across a restart of the daemon, ``wait``, ``output(follow=True)`` and
    ``watch`` connect again with backoff for up to ``reconnect`` seconds
    and resume; every other method raises DaemonUnavailable.
    """

    def __init__(self, socket: str | os.PathLike[str] | None = None,
                 timeout: float | None = None, *,
                 reconnect: float | None = None) -> None:
        self.socket_path = socket_path(socket)
        self.timeout = timeout
        self.reconnect = _calls.reconnect_limit(reconnect)
        self._ids = itertools.count(1)
        self._link: _Link | None = None
        self._redial_lock: asyncio.Lock | None = None
        self._closed = False

    # -- life cycle ---------------------------------------------------------

    async def connect(self) -> "AsyncClient":
        """Connects (DaemonUnavailable when the socket cannot be reached)."""
        if self._link is None:
            self._link = await _open_link(self.socket_path, self.timeout)
            self._redial_lock = asyncio.Lock()
        return self

    async def __aenter__(self) -> "AsyncClient":
        return await self.connect()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Closes the connection; requests in flight fail with
        DaemonUnavailable."""
        self._closed = True
        link, self._link = self._link, None
        if link is not None:
            await link.close()

    @property
    def pending(self) -> int:
        """How many requests are on the wire now, sent and not answered
        (as Client.pending)."""
        return 0 if self._link is None else len(self._link.pending)

    # -- the request machinery ----------------------------------------------

    async def call(self, method: str,
                   params: Mapping[str, Any] | None = None, *,
                   wait_for: float | None = 0.0) -> Any:
        """Sends one request and returns its result, or raises its error
        (as Client.call; it never reconnects)."""
        link = self._link
        if link is None:
            raise DaemonUnavailable(f"not connected to {self.socket_path}",
                                    self.socket_path)
        if link.broken is not None:
            raise _NotSent(f"connection to {self.socket_path} lost: "
                           f"{link.broken}", self.socket_path)
        rid = next(self._ids)
        fut: asyncio.Future[Any] = link.create_future()
        link.pending[rid] = fut
        link.send(_request(rid, method, params))
        timer = None
        if self.timeout is not None and wait_for is not None:
            # The plain timeout's deadlines share a timer; wait_for, which
            # would put them out of order, gets one of its own.
            if wait_for == 0:
                timer = link.expire(self.timeout, fut, rid)
            else:
                timer = link.call_later(self.timeout + wait_for, _time_out,
                                        fut, rid)
        try:
            await link.drain()
            reply = await fut
        finally:
            if timer is not None:
                timer.cancel()
            if link.pending.get(rid) is fut:
                # Given up on (timed out, canceled): a late reply is dropped.
                del link.pending[rid]
        if "error" in reply:
            raise error_from_reply(reply["error"])
        if "result" not in reply:
            raise ProtocolError(None, f"reply to {method} without result")
        return reply["result"]

    async def _perform(self, call: Call[R]) -> R:
        """Makes one Call, reconnecting only when the connection is lost,
        as Client._perform: a request that never went out is sent once
        more on a new connection (one attempt to connect); a wait is made
        again after any drop, for up to ``reconnect`` seconds of outage."""
        start = time.monotonic()
        this = call
        resent = False
        while True:
            link = self._link
            try:
                return this.decode(await self.call(this.method, this.params,
                                                   wait_for=this.wait_for))
            except DaemonUnavailable as exc:
                if self._closed:
                    raise
                if call.redoable and self.reconnect > 0:
                    await self._redial(link, exc, self.reconnect)
                elif isinstance(exc, _NotSent) and not resent:
                    resent = True
                    await self._redial(link, exc, 0.0)
                else:
                    raise
            this = call.again(time.monotonic() - start)

    async def _redial(self, old: _Link | None, why: BaseException,
                      limit: float) -> None:
        """Replaces the lost link old (unless another task did already),
        trying for up to ``limit`` seconds while the daemon is away (0:
        once)."""
        assert self._redial_lock is not None
        async with self._redial_lock:
            if self._link is not old or self._closed:
                return
            if old is not None:
                old.fail(why)
                await old.close()
            self._link = await _redial(self.socket_path, self.timeout,
                                       limit, why, _open_link)

    # -- jobs and the daemon: the params built in _calls, shared with the
    # -- sync Client; each method's doc is the protocol's, shortened.

    async def submit(self, argv: Sequence[str | bytes], *,
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
        return await self._perform(_calls.submit(
            argv, priority=priority, name=name, env=env, cwd=cwd,
            timeout=timeout, retries=retries, after=after, labels=labels,
            memory=memory, resources=resources, key=key, hold=hold,
            slots=slots, exclusive=exclusive, nice=nice,
            merge_output=merge_output, begin_at=begin_at,
            after_any=after_any, node=node, **extra))

    async def get(self, id: int) -> Job:
        """The job ``id`` as it is now; NoSuchJob when there is none."""
        return await self._perform(_calls.get(id))

    async def list(self, *, state: Sequence[str] | str | None = None,
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
        return await self._perform(_calls.list(
            state=state, priority=priority, labels=labels, name=name,
            held=held, limit=limit, after_id=after_id))

    async def wait(self, id: int, timeout: float | None = None) -> Job:
        """Waits until job ``id`` has ended, or ``timeout`` seconds (None:
        as long as it takes), and returns it as it is then: check
        ``job.terminal``. Other requests on the client go on meanwhile.

        When the connection drops (the daemon restarts), the client
        connects again with backoff for up to ``reconnect`` seconds and
        waits again, for what is left of ``timeout``; past that,
        DaemonUnavailable. NoSuchJob for an id of no job."""
        return await self._perform(_calls.wait(id, timeout))

    async def wait_all(self, ids: Sequence[int],
                 timeout: float | None = None) -> builtins.list[Job]:
        """As wait, for every job of ``ids`` (1 to 100,000 ids): their
        list, in the order of ``ids``, each as its end left it or as it is
        at the timeout."""
        return await self._perform(_calls.wait_all(ids, timeout))

    @overload
    async def cancel(self, id: int, *, signal: str | None = None) -> Job: ...
    @overload
    async def cancel(self, *, filter: Filter,
               signal: str | None = None) -> builtins.list[int]: ...

    async def cancel(self, id: int | None = None, *, filter: Filter | None = None,
               signal: str | None = None) -> Job | builtins.list[int]:
        """Cancels job ``id`` and returns it (a running one may still show
        running until its process has exited), or every queued or running
        job ``filter`` selects (triage-protocol(7), SELECTING MANY JOBS) and
        returns their ids. ``signal`` ("SIGINT", "INT", "SIG10") goes first
        to a running job's process group; SIGTERM by default. Canceling an
        ended job returns it unchanged."""
        return await self._perform(_calls.cancel(id, filter=filter, signal=signal))

    @overload
    async def hold(self, id: int) -> Job: ...
    @overload
    async def hold(self, *, filter: Filter) -> builtins.list[int]: ...

    async def hold(self, id: int | None = None, *,
             filter: Filter | None = None) -> Job | builtins.list[int]:
        """Holds a queued job: it keeps its place but does not start until
        released. The job, or with ``filter`` the ids held."""
        return await self._perform(_calls.hold(id, filter=filter))

    @overload
    async def release(self, id: int) -> Job: ...
    @overload
    async def release(self, *, filter: Filter) -> builtins.list[int]: ...

    async def release(self, id: int | None = None, *,
                filter: Filter | None = None) -> Job | builtins.list[int]:
        """Releases a held job back to the place it had in its queue. The
        job, or with ``filter`` the ids released."""
        return await self._perform(_calls.release(id, filter=filter))

    @overload
    async def retry(self, id: int) -> Job: ...
    @overload
    async def retry(self, *, filter: Filter) -> builtins.list[int]: ...

    async def retry(self, id: int | None = None, *,
              filter: Filter | None = None) -> Job | builtins.list[int]:
        """Queues an ended job that did not succeed again, as a new attempt
        (WrongState for one queued, running or succeeded). The job, or with
        ``filter`` the ids retried."""
        return await self._perform(_calls.retry(id, filter=filter))

    @overload
    async def freeze(self, id: int) -> Job: ...
    @overload
    async def freeze(self, *, filter: Filter) -> builtins.list[int]: ...

    async def freeze(self, id: int | None = None, *,
               filter: Filter | None = None) -> Job | builtins.list[int]:
        """Freezes a running job's processes where they are (its timeout
        clock stops); it stays running, with ``job["frozen"]`` true. The
        job, or with ``filter`` the ids frozen."""
        return await self._perform(_calls.freeze(id, filter=filter))

    @overload
    async def thaw(self, id: int) -> Job: ...
    @overload
    async def thaw(self, *, filter: Filter) -> builtins.list[int]: ...

    async def thaw(self, id: int | None = None, *,
             filter: Filter | None = None) -> Job | builtins.list[int]:
        """Thaws a frozen job. The job, or with ``filter`` the ids
        thawed."""
        return await self._perform(_calls.thaw(id, filter=filter))

    async def remove(self, id: int | None = None, *,
               filter: Filter | None = None) -> builtins.list[int]:
        """Deletes ended jobs and their output for good; the ids removed.
        WrongState for a job given by ``id`` that has not ended."""
        return await self._perform(_calls.remove(id, filter=filter))

    async def update(self, id: int, *, priority: str | None = None,
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
        return await self._perform(_calls.update(
            id, priority=priority, name=name, timeout=timeout,
            retries=retries, labels=labels, begin_at=begin_at, nice=nice,
            memory=memory, resources=resources))

    async def stats(self) -> dict[str, Any]:
        """The daemon's figures: the stats object of triage-protocol(7)
        (``slots``, ``priorities``, ``jobs`` by state, ``version``...)."""
        return await self._perform(_calls.stats())

    async def pause(self, priority: str | None = None) -> dict[str, Any]:
        """Pauses a priority, or every one: it takes submissions but starts
        nothing. Admins only (PermissionDenied). Returns the stats."""
        return await self._perform(_calls.pause(priority))

    async def resume(self, priority: str | None = None) -> dict[str, Any]:
        """Resumes a paused priority, or every one. Admins only. Returns
        the stats."""
        return await self._perform(_calls.resume(priority))

    async def reload(self) -> None:
        """Makes the daemon read its config again, as SIGHUP does. Admins
        only; ConfigRejected, with ``errors``, when the new config is wrong
        (the old one stays in force)."""
        return await self._perform(_calls.reload())

    async def output(self, id: int, stream: str = "stdout",
                     follow: bool = False, *, offset: int = 0,
                     limit: int | None = None) -> AsyncIterator[bytes]:
        """As Client.output, an async iterator of chunks of bytes:
        ``async for chunk in c.output(id, follow=True)``. Following
        survives a restart of the daemon, going on from the offset reached."""
        cursor = OutputCursor(id, stream, offset, limit)
        while True:
            link = self._link
            try:
                chunk = cursor.feed(await self._perform(cursor.call()))
                if chunk is None:
                    continue
                if chunk:
                    yield chunk
                if cursor.done or (not chunk and not follow):
                    return
                if not chunk:
                    await self._perform(_calls.wait(id, timeout=FOLLOW_POLL))
            except DaemonUnavailable as exc:
                if not follow or self.reconnect <= 0 or self._closed:
                    raise
                await self._redial(link, exc, self.reconnect)

    def watch(self, ids: Sequence[int] | None = None,
              priority: str | None = None) -> "AsyncWatch":
        """An AsyncWatch on a connection of its own: ``async with
        c.watch() as w: async for event in w``. Across a restart of the
        daemon it connects again and renews its watches; the changes made
        while it was away are not replayed (the protocol has no replay)."""
        return AsyncWatch(self.socket_path, self.timeout, ids=ids,
                          priority=priority, reconnect=self.reconnect)


class AsyncWatch:
    """The notifications of one watch, as an async iterator of Events, on a
    connection of its own (as Watch). It connects on ``async with`` (or at
    the first event); one task consumes it. With ``reconnect`` 0, the
    iteration ends when the daemon goes away; otherwise it connects again,
    renews every watch (events of the gap are not replayed), and raises
    DaemonUnavailable only past the bound."""

    def __init__(self, path: str, timeout: float | None, *,
                 ids: Sequence[int] | None = None,
                 priority: str | None = None,
                 reconnect: float | None = None) -> None:
        self._path = path
        self._timeout = timeout
        self._reconnect = _calls.reconnect_limit(reconnect)
        self._ids = itertools.count(1)
        self._watches = [_calls.watch_params(ids, priority)]
        self._early: builtins.list[Any] = []
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._closed = False

    async def start(self) -> "AsyncWatch":
        """Connects and makes the watch: events come from then on."""
        if self._writer is None:
            self._reader, self._writer = await _open(self._path, self._timeout)
            await self._subscribe_all()
        return self

    async def __aenter__(self) -> "AsyncWatch":
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Ends the watch: closes its connection."""
        self._closed = True
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()
            try:
                await writer.wait_closed()
            except OSError:
                pass

    async def add(self, ids: Sequence[int] | None = None,
                  priority: str | None = None) -> None:
        """One more watch on this connection (not while another task is
        iterating it)."""
        await self.start()
        params = _calls.watch_params(ids, priority)
        await self._subscribe(params)
        self._watches.append(params)

    async def _subscribe_all(self) -> None:
        for params in self._watches:
            await self._subscribe(params)

    async def _subscribe(self, params: dict[str, Any]) -> None:
        assert self._reader is not None and self._writer is not None
        rid = next(self._ids)
        try:
            self._writer.write(_encode({"jsonrpc": "2.0", "id": rid,
                                        "method": "watch", "params": params}))
            await self._writer.drain()
        except OSError as exc:
            raise DaemonUnavailable(f"lost the daemon at {self._path}: {exc}",
                                    self._path) from exc
        while True:
            message = await asyncio.wait_for(
                _read_message(self._reader, self._path), self._timeout)
            if isinstance(message, dict) and message.get("id") == rid:
                if "error" in message:
                    raise error_from_reply(message["error"])
                return
            if isinstance(message, dict) and "error" in message:
                raise error_from_reply(message["error"])
            self._early.append(message)

    async def _renew(self, why: BaseException) -> None:
        give_up = time.monotonic() + self._reconnect
        while True:
            if self._writer is not None:
                self._writer.close()
            left = max(0.0, give_up - time.monotonic())
            self._reader, self._writer = await _redial(
                self._path, self._timeout, left, why, _open)
            try:
                await self._subscribe_all()
                return
            except DaemonUnavailable as exc:
                why = exc
                if time.monotonic() >= give_up:
                    raise _calls.gave_up(self._path, self._reconnect, exc)

    def __aiter__(self) -> "AsyncWatch":
        return self

    async def __anext__(self) -> Event:
        return await self.next()

    async def next(self, timeout: float | None = None) -> Event:
        """The next event; TimeoutError after ``timeout`` seconds without
        one; StopAsyncIteration once closed."""
        if self._closed:
            raise StopAsyncIteration
        await self.start()
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if self._early:
                message = self._early.pop(0)
            else:
                if self._closed or self._reader is None:
                    raise StopAsyncIteration
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                try:
                    message = await asyncio.wait_for(
                        _read_message(self._reader, self._path), left)
                except asyncio.TimeoutError:
                    raise TimeoutError("no event in time") from None
                except DaemonUnavailable as exc:
                    if self._reconnect <= 0 or self._closed:
                        raise StopAsyncIteration from None
                    await self._renew(exc)
                    continue
            if isinstance(message, dict) and "id" in message and "error" in message:
                raise error_from_reply(message["error"])
            event = _calls.event_of(message)
            if event is not None:
                return event
