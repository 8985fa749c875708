"""The asyncio client of triaged: the methods of Client as coroutines,
pipelined on one connection (many requests in flight, one reader task
matching replies to their futures by id)."""

from __future__ import annotations

import asyncio
import builtins
import functools
import itertools
import json
import os
import time
from typing import Any, AsyncIterator, Callable, Mapping, Sequence

from . import _calls
from ._calls import FOLLOW_POLL, Call, OutputCursor
from ._wire import _connect_message, socket_path
from .errors import DaemonUnavailable, ProtocolError, error_from_reply
from .job import Event

__all__ = ["AsyncClient", "AsyncWatch"]

# The longest line the reader takes (an output page is one line).
_LINE_LIMIT = 64 * 1024 * 1024


async def _open(path: str, timeout: float | None
                ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    try:
        return await asyncio.wait_for(
            asyncio.open_unix_connection(path, limit=_LINE_LIMIT), timeout)
    except OSError as exc:
        raise DaemonUnavailable(_connect_message(path, exc), path) from exc
    except asyncio.TimeoutError as exc:
        raise DaemonUnavailable(f"cannot connect to {path}: timed out",
                                path) from exc


async def _redial(path: str, timeout: float | None, limit: float,
                  first: BaseException | None
                  ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A new connection, trying again with backoff while the daemon is away,
    for up to ``limit`` seconds (as client.redial)."""
    give_up = time.monotonic() + limit
    last = first
    for pause in _calls.backoff():
        try:
            return await _open(path, timeout)
        except DaemonUnavailable as exc:
            if not _calls.daemon_away(exc):
                raise
            last = exc
        left = give_up - time.monotonic()
        if left <= 0:
            raise _calls.gave_up(path, limit, last)
        await asyncio.sleep(min(pause, left))
    raise AssertionError("unreachable")


def _encode(message: Any) -> bytes:
    return json.dumps(message, ensure_ascii=True,
                      separators=(",", ":")).encode("ascii") + b"\n"


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
        line = line.rstrip(b"\r\n")
        if not line.strip():
            continue
        try:
            return json.loads(line)
        except ValueError as exc:
            raise ProtocolError(None, f"the daemon sent a line that is not "
                                f"JSON: {exc}") from exc


class _Link:
    """One connection of an AsyncClient: its streams, the futures of the
    requests in flight on it, and the task reading their replies."""

    def __init__(self, path: str, reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter) -> None:
        self.path = path
        self.reader, self.writer = reader, writer
        self.pending: dict[int, asyncio.Future[Any]] = {}
        self.broken: BaseException | None = None
        self.task = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        try:
            while True:
                message = await _read_message(self.reader, self.path)
                for reply in (message if isinstance(message, builtins.list)
                              else [message]):
                    self._file(reply)
        except asyncio.CancelledError:
            self.fail(DaemonUnavailable(f"connection to {self.path} closed",
                                        self.path))
            raise
        except BaseException as exc:
            self.fail(exc)

    def _file(self, reply: Any) -> None:
        if not isinstance(reply, dict):
            return
        rid = reply.get("id")
        if isinstance(rid, int):
            fut = self.pending.pop(rid, None)
            if fut is not None and not fut.done():
                fut.set_result(reply)
        elif rid is None and "error" in reply:
            # The daemon could not read a request: it answers none we can
            # name, and the connection may be closing (max_request).
            self.fail(error_from_reply(reply["error"]))

    def fail(self, exc: BaseException) -> None:
        """Ends the link: every request in flight fails."""
        if self.broken is None:
            self.broken = exc
        lost = (exc if isinstance(exc, DaemonUnavailable) else
                DaemonUnavailable(f"connection to {self.path} lost: {exc}",
                                  self.path))
        for fut in self.pending.values():
            if not fut.done():
                fut.set_exception(lost)
        self.pending.clear()
        self.writer.close()

    async def close(self) -> None:
        self.task.cancel()
        try:
            await self.task
        except BaseException:
            pass
        self.writer.close()
        try:
            await self.writer.wait_closed()
        except OSError:
            pass


def _async_method(name: str) -> Callable[..., Any]:
    builder = getattr(_calls, name)

    @functools.wraps(builder)
    async def method(self: "AsyncClient", *args: Any, **kwargs: Any) -> Any:
        return await self._perform(builder(*args, **kwargs))

    del method.__wrapped__
    method.__signature__ = _calls.method_signature(  # type: ignore[attr-defined]
        builder, Any)
    return method


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
            reader, writer = await _open(self.socket_path, self.timeout)
            self._link = _Link(self.socket_path, reader, writer)
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
            raise (link.broken if isinstance(link.broken, DaemonUnavailable)
                   else DaemonUnavailable(f"connection to {self.socket_path}"
                                          f" lost: {link.broken}",
                                          self.socket_path))
        rid = next(self._ids)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params:
            message["params"] = dict(params)
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        link.pending[rid] = fut
        try:
            link.writer.write(_encode(message))
            await link.writer.drain()
        except OSError as exc:
            link.pending.pop(rid, None)
            lost = DaemonUnavailable(f"lost the daemon at {self.socket_path}:"
                                     f" {exc}", self.socket_path)
            link.fail(lost)
            raise lost from exc
        limit = None
        if self.timeout is not None and wait_for is not None:
            limit = self.timeout + wait_for
        try:
            reply = await asyncio.wait_for(asyncio.shield(fut), limit)
        except asyncio.TimeoutError:
            # Given up on: its late reply is dropped.
            link.pending.pop(rid, None)
            raise TimeoutError(f"no reply from triaged in time "
                               f"(request {rid})") from None
        finally:
            if not fut.done():
                link.pending.pop(rid, None)
                fut.cancel()
        if "error" in reply:
            raise error_from_reply(reply["error"])
        if "result" not in reply:
            raise ProtocolError(None, f"reply to {method} without result")
        return reply["result"]

    async def _perform(self, call: Call) -> Any:
        """Makes one Call; a wait is made again on a new connection when the
        old one drops, up to ``reconnect`` seconds of outage."""
        start = time.monotonic()
        this = call
        while True:
            link = self._link
            try:
                return this.decode(await self.call(this.method, this.params,
                                                   wait_for=this.wait_for))
            except DaemonUnavailable as exc:
                if not call.redoable or self.reconnect <= 0 or self._closed:
                    raise
                await self._redial(link, exc)
            this = call.again(time.monotonic() - start)

    async def _redial(self, old: _Link | None, why: BaseException) -> None:
        """Replaces the lost link old (unless another task did already)."""
        assert self._redial_lock is not None
        async with self._redial_lock:
            if self._link is not old or self._closed:
                return
            if old is not None:
                old.fail(why)
                await old.close()
            reader, writer = await _redial(self.socket_path, self.timeout,
                                           self.reconnect, why)
            self._link = _Link(self.socket_path, reader, writer)

    # -- jobs and the daemon: built in _calls, the same for Client ----------

    submit = _async_method("submit")
    get = _async_method("get")
    list = _async_method("list")
    wait = _async_method("wait")
    cancel = _async_method("cancel")
    hold = _async_method("hold")
    release = _async_method("release")
    retry = _async_method("retry")
    freeze = _async_method("freeze")
    thaw = _async_method("thaw")
    remove = _async_method("remove")
    update = _async_method("update")
    stats = _async_method("stats")
    pause = _async_method("pause")
    resume = _async_method("resume")
    reload = _async_method("reload")

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
                await self._redial(link, exc)

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
                self._path, self._timeout, left, why)
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
