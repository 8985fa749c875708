"""Reconnecting across a restart of the daemon: a daemon under
``shutdown = keep`` is stopped with SIGTERM while a wait, a watch or a
following output is in flight (its jobs go on in their workers) and started
again on the same state dir; each must connect again and carry on. And the
other side: nothing but a lost connection makes a client connect again.
No fixed sleeps: every step polls with a deadline."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
import unittest
import warnings
from typing import Any, Callable

from harness import JOB_S, READY_S, Daemon, need_triaged, poll

import triage

# The job outlives the stop and the start: ~2 s.
SLEEP = ["sleep", "2"]
# Writes a line, then another once the test has let it go (a file appears):
# the second line comes after the restart, whatever the timing.
TWO_LINES = ["sh", "-c", 'echo one; while [ ! -e "$0" ]; do sleep 0.05; done;'
             ' echo two']


class RestartTest(unittest.TestCase):
    def setUp(self) -> None:
        need_triaged()
        self.daemon = Daemon("shutdown = keep\n")
        self.addCleanup(self.daemon.close)

    def client(self, **kw: Any) -> triage.Client:
        kw.setdefault("reconnect", 60)
        c = triage.Client(self.daemon.sock, timeout=10, **kw)
        self.addCleanup(c.close)
        return c

    def running_job(self, c: triage.Client, argv: list[str] = SLEEP) -> int:
        job = c.submit(argv, name="restart")
        poll(lambda: c.get(job.id).state == "running", JOB_S, "the job to run")
        return job.id

    def restart(self) -> None:
        self.daemon.stop(signal.SIGTERM)
        # While it is away, there is no daemon to connect to.
        with self.assertRaises(triage.DaemonUnavailable):
            triage.Client(self.daemon.sock, timeout=2, reconnect=0)
        self.daemon.start()

    def in_thread(self, what: Callable[[], Any]) -> tuple[threading.Thread, dict[str, Any]]:
        result: dict[str, Any] = {}

        def run() -> None:
            try:
                result["value"] = what()
            except BaseException as exc:  # noqa: BLE001 - reported by the test
                result["error"] = exc

        t = threading.Thread(target=run, daemon=True)
        t.start()
        return t, result

    def test_sync_wait_survives_restart(self) -> None:
        c = self.client()
        jid = self.running_job(c)
        before = self.daemon.connections()
        t, result = self.in_thread(lambda: c.wait(jid))
        # The wait is on the wire before the stop.
        poll(lambda: c.pending, READY_S, "the wait to be sent")
        self.restart()
        t.join(JOB_S)
        self.assertFalse(t.is_alive(), "the wait did not return")
        self.assertNotIn("error", result)
        job = result["value"]
        self.assertEqual((job.id, job.state), (jid, "succeeded"))
        # It connected again, once; the new connection serves every method.
        self.assertEqual(c.get(jid).state, "succeeded")
        self.assertEqual(self.daemon.connections(), before + 1)

    def test_sync_output_follow_survives_restart(self) -> None:
        c = self.client()
        go = self.daemon.dir / "go"
        jid = self.running_job(c, TWO_LINES + [str(go)])
        chunks: list[bytes] = []
        t, result = self.in_thread(
            lambda: chunks.extend(c.output(jid, follow=True)))
        poll(lambda: b"".join(chunks) == b"one\n", JOB_S, "the first line")
        self.restart()
        go.touch()
        t.join(JOB_S)
        self.assertFalse(t.is_alive(), "the follow did not end")
        self.assertNotIn("error", result)
        # Each byte once: it went on from the offset reached.
        self.assertEqual(b"".join(chunks), b"one\ntwo\n")
        self.assertEqual(c.get(jid).state, "succeeded")

    def test_sync_watch_survives_restart(self) -> None:
        c = self.client()
        with c.watch() as w, self.client() as other:
            self.restart()
            # The watch finds the daemon gone at its next read, connects
            # again and renews itself; what happened in the gap is not
            # replayed. So: make jobs until one is heard (the first may
            # come before the renewal).
            made: set[int] = set()
            heard = None
            deadline = time.monotonic() + JOB_S
            while heard is None and time.monotonic() < deadline:
                made.add(other.submit(["true"], hold=True,
                                      labels={"gap": "w"}).id)
                try:
                    while True:
                        ev = w.next(timeout=0.5)
                        if ev.job is not None and ev.job.id in made:
                            heard = ev.job
                            break
                except TimeoutError:
                    pass
            other.cancel(filter={"labels": {"gap": "w"}})
        self.assertIsNotNone(heard, "no event after the restart")

    def test_watch_ends_without_reconnect(self) -> None:
        c = self.client(reconnect=0)
        w = c.watch()
        self.addCleanup(w.close)
        self.daemon.stop(signal.SIGTERM)
        with self.assertRaises(StopIteration):
            w.next(timeout=JOB_S)

    def test_wait_without_reconnect_raises(self) -> None:
        c = self.client(reconnect=0)
        jid = self.running_job(c)
        t, result = self.in_thread(lambda: c.wait(jid))
        poll(lambda: c.pending, READY_S, "the wait to be sent")
        self.daemon.stop(signal.SIGTERM)
        t.join(JOB_S)
        self.assertIsInstance(result.get("error"), triage.DaemonUnavailable)

    def test_lost_connection_is_replaced_at_next_call(self) -> None:
        c = self.client()
        jid = c.submit(["true"]).id
        before = self.daemon.connections()
        self.daemon.stop(signal.SIGTERM)
        # Daemon away: one attempt to connect, not reconnect's 60 s of them.
        start = time.monotonic()
        with self.assertRaises(triage.DaemonUnavailable):
            c.get(jid)
        self.assertLess(time.monotonic() - start, 5)
        self.daemon.start()
        # Back: the get that never went out goes on a new connection.
        self.assertEqual(c.get(jid).id, jid)
        self.assertEqual(c.submit(["true"]).state in ("queued", "running"),
                         True)
        self.assertEqual(self.daemon.connections(), before + 1)

    def test_timeout_is_no_reason_to_reconnect(self) -> None:
        c = self.client()
        jid = c.submit(["true"]).id
        before = self.daemon.connections()
        self.daemon.proc.send_signal(signal.SIGSTOP)
        try:
            with triage.Client(self.daemon.sock, timeout=0.3,
                               reconnect=60) as slow:
                # Connected before the stop? No: connect() is answered by
                # the kernel's backlog, the reply never comes.
                with self.assertRaises(TimeoutError):
                    slow.get(jid)
                with self.assertRaises(TimeoutError):
                    slow.wait(jid, timeout=0.1)
        finally:
            self.daemon.proc.send_signal(signal.SIGCONT)
        self.assertEqual(c.get(jid).id, jid)
        # The stopped daemon took slow's connection from its backlog once
        # it went on: slow connected once, c never again.
        poll(lambda: self.daemon.connections() >= before + 1, READY_S,
             "the daemon to log the slow client")
        self.assertEqual(self.daemon.connections(), before + 1)

    def test_async_wait_and_watch_survive_restart(self) -> None:
        asyncio.run(self._async_restart())

    async def _async_restart(self) -> None:
        loop = asyncio.get_running_loop()
        async with triage.AsyncClient(self.daemon.sock, timeout=10,
                                      reconnect=60) as c:
            job = await c.submit(SLEEP, name="restart-aio")
            async with c.watch() as w:
                while True:
                    ev = await w.next(timeout=JOB_S)
                    if (ev.job is not None and ev.job.id == job.id
                            and ev.job.state == "running"):
                        break
                before = self.daemon.connections()
                waiting = asyncio.ensure_future(c.wait(job.id))
                # The wait's line goes out at its first step; a reply to a
                # request sent after it says the daemon has read it.
                await asyncio.sleep(0)
                self.assertEqual(c.pending, 1)
                await c.stats()
                await loop.run_in_executor(None, self.restart)
                self.assertFalse(waiting.done())
                done = await asyncio.wait_for(waiting, JOB_S)
                self.assertEqual((done.id, done.state),
                                 (job.id, "succeeded"))
                # The watch is renewed at its next read: jobs made after
                # the restart are heard on it (what happened in the gap is
                # not replayed, so the first may be missed).
                made: set[int] = set()
                deadline = loop.time() + JOB_S
                while loop.time() < deadline:
                    made.add((await c.submit(["true"], hold=True,
                                             labels={"gap": "a"})).id)
                    try:
                        ev = await w.next(timeout=0.5)
                        while ev.job is None or ev.job.id not in made:
                            ev = await w.next(timeout=0.5)
                        break
                    except TimeoutError:
                        pass
                else:
                    self.fail("no event after the restart")
                await c.cancel(filter={"labels": {"gap": "a"}})
                # One new connection for the client, one for the watch.
                self.assertEqual(self.daemon.connections(), before + 2)

    def test_async_output_follow_survives_restart(self) -> None:
        asyncio.run(self._async_follow())

    async def _async_follow(self) -> None:
        loop = asyncio.get_running_loop()
        go = self.daemon.dir / "go"
        async with triage.AsyncClient(self.daemon.sock, timeout=10,
                                      reconnect=60) as c:
            job = await c.submit(TWO_LINES + [str(go)])
            chunks: list[bytes] = []
            async for chunk in c.output(job.id, follow=True):
                chunks.append(chunk)
                if b"".join(chunks) == b"one\n":
                    await loop.run_in_executor(None, self.restart)
                    go.touch()
            self.assertEqual(b"".join(chunks), b"one\ntwo\n")
            self.assertEqual((await c.get(job.id)).state, "succeeded")

    def test_async_lost_connection_is_replaced_at_next_call(self) -> None:
        async def go() -> None:
            loop = asyncio.get_running_loop()
            async with triage.AsyncClient(self.daemon.sock, timeout=10,
                                          reconnect=60) as c:
                jid = (await c.submit(["true"])).id
                await loop.run_in_executor(None, self.daemon.stop,
                                           signal.SIGTERM)
                with self.assertRaises(triage.DaemonUnavailable):
                    await c.get(jid)
                await loop.run_in_executor(None, self.daemon.start)
                self.assertEqual((await c.get(jid)).id, jid)
        asyncio.run(go())


class ReconnectEnvTest(unittest.TestCase):
    """$TRIAGE_RECONNECT, read as the CLI reads it (client/cmd.c)."""

    def setUp(self) -> None:
        need_triaged()
        self.daemon = Daemon()
        self.addCleanup(self.daemon.close)
        saved = os.environ.get("TRIAGE_RECONNECT")
        self.addCleanup(lambda: os.environ.__setitem__("TRIAGE_RECONNECT", saved)
                        if saved is not None else os.environ.pop("TRIAGE_RECONNECT", None))

    def limit(self, value: str | None) -> float:
        if value is None:
            os.environ.pop("TRIAGE_RECONNECT", None)
        else:
            os.environ["TRIAGE_RECONNECT"] = value
        with triage.Client(self.daemon.sock) as c:
            sync = c.reconnect

        async def go() -> float:
            async with triage.AsyncClient(self.daemon.sock) as ac:
                return ac.reconnect
        self.assertEqual(asyncio.run(go()), sync)
        return sync

    def test_good_values(self) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            self.assertEqual(self.limit(None), 300)
            self.assertEqual(self.limit(""), 300)
            self.assertEqual(self.limit("0"), 0)
            self.assertEqual(self.limit("12"), 12)
        with triage.Client(self.daemon.sock, reconnect=7) as c:
            self.assertEqual(c.reconnect, 7)

    def test_bad_values_warn_and_take_the_default(self) -> None:
        for bad in ("ten", "-1", "1.5", " 5", "+5", "5s", "99999999"):
            with self.subTest(bad=bad):
                with self.assertWarns(RuntimeWarning) as cm:
                    self.assertEqual(self.limit(bad), 300)
                self.assertIn("TRIAGE_RECONNECT", str(cm.warning))


if __name__ == "__main__":
    unittest.main()
