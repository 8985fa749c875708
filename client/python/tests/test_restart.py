"""Reconnecting across a restart of the daemon: a daemon under
``shutdown = keep`` is stopped with SIGTERM while a wait is in flight (its
jobs go on in their workers) and started again on the same state dir; the
wait must connect again and return the job's end. No fixed sleeps: every
step polls with a deadline."""

from __future__ import annotations

import asyncio
import signal
import threading
import time
import unittest
from typing import Any, Callable

from test_client import JOB_S, READY_S, TRIAGED, Daemon

import triage

# The job outlives the stop and the start: ~2 s.
SLEEP = ["sleep", "2"]


def poll(what: Callable[[], Any], deadline_s: float, msg: str) -> Any:
    deadline = time.monotonic() + deadline_s
    while True:
        value = what()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {msg}")
        time.sleep(0.01)


class RestartTest(unittest.TestCase):
    def setUp(self) -> None:
        if not TRIAGED.exists():
            raise unittest.SkipTest(f"{TRIAGED} not built: run make first")
        self.daemon = Daemon("shutdown = keep\n")
        self.addCleanup(self.daemon.close)

    def running_job(self, c: triage.Client) -> int:
        job = c.submit(SLEEP, name="restart")
        poll(lambda: c.get(job.id).state == "running", JOB_S, "the job to run")
        return job.id

    def test_sync_wait_survives_restart(self) -> None:
        c = triage.Client(self.daemon.sock, timeout=10, reconnect=60)
        self.addCleanup(c.close)
        jid = self.running_job(c)
        first = c._conn
        result: dict[str, Any] = {}

        def waiter() -> None:
            try:
                result["job"] = c.wait(jid)
            except BaseException as exc:  # noqa: BLE001 - reported below
                result["error"] = exc

        t = threading.Thread(target=waiter, daemon=True)
        t.start()
        # The wait is on the wire (sent under the lock) before the stop.
        poll(lambda: c._waiting, READY_S, "the wait to be sent")
        self.daemon.stop(signal.SIGTERM)
        self.assertTrue(t.is_alive(), result)
        # While it is away, there is no daemon to connect to.
        with self.assertRaises(triage.DaemonUnavailable):
            triage.Client(self.daemon.sock, timeout=2, reconnect=0).get(jid)
        self.daemon.start()
        t.join(JOB_S)
        self.assertFalse(t.is_alive(), "the wait did not return")
        self.assertNotIn("error", result)
        job = result["job"]
        self.assertEqual(job.id, jid)
        self.assertTrue(job.terminal)
        self.assertEqual(job.state, "succeeded")
        self.assertIsNot(c._conn, first, "no reconnect happened")
        # The new connection serves every method.
        self.assertEqual(c.get(jid).state, "succeeded")

    def test_get_raises_when_connection_lost(self) -> None:
        c = triage.Client(self.daemon.sock, timeout=10, reconnect=60)
        self.addCleanup(c.close)
        jid = c.submit(["true"]).id
        self.daemon.stop(signal.SIGTERM)
        with self.assertRaises(triage.DaemonUnavailable):
            c.get(jid)

    def test_async_wait_and_watch_survive_restart(self) -> None:
        asyncio.run(self._async_restart())

    async def _async_restart(self) -> None:
        loop = asyncio.get_running_loop()

        async def apoll(what: Callable[[], Any], msg: str) -> None:
            deadline = loop.time() + READY_S
            while not what():
                if loop.time() > deadline:
                    raise AssertionError(f"timed out waiting for {msg}")
                await asyncio.sleep(0.01)

        async with triage.AsyncClient(self.daemon.sock, timeout=10,
                                      reconnect=60) as c:
            job = await c.submit(SLEEP, name="restart-aio")
            async with c.watch() as w:
                while True:
                    ev = await w.next(timeout=JOB_S)
                    if (ev.job is not None and ev.job.id == job.id
                            and ev.job.state == "running"):
                        break
                first = c._link
                waiting = asyncio.ensure_future(c.wait(job.id))
                await apoll(lambda: first is not None and first.pending,
                            "the wait to be sent")
                await loop.run_in_executor(None, self.daemon.stop,
                                           signal.SIGTERM)
                self.assertFalse(waiting.done())
                await loop.run_in_executor(None, self.daemon.start)
                done = await asyncio.wait_for(waiting, JOB_S)
                self.assertEqual(done.id, job.id)
                self.assertEqual(done.state, "succeeded")
                self.assertIsNot(c._link, first, "no reconnect happened")
                # The watch is renewed: a job made after the restart is
                # heard on it (what happened in the gap is not replayed).
                other = await c.submit(["true"], name="restart-aio-2")
                while True:
                    ev = await w.next(timeout=JOB_S)
                    if ev.job is not None and ev.job.id == other.id:
                        break

if __name__ == "__main__":
    unittest.main()
