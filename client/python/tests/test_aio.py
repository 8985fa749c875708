"""Tests of triage.AsyncClient against a real daemon (see test_client)."""

from __future__ import annotations

import asyncio
import unittest

from test_client import JOB_S, TRIAGED, Daemon

import triage

DAEMON: Daemon | None = None


def setUpModule() -> None:
    global DAEMON
    if not TRIAGED.exists():
        raise unittest.SkipTest(f"{TRIAGED} not built: run make first")
    DAEMON = Daemon()


def tearDownModule() -> None:
    if DAEMON is not None:
        DAEMON.close()


class AsyncClientTest(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self) -> None:
        assert DAEMON is not None
        self.client = await triage.AsyncClient(DAEMON.sock, timeout=10).connect()

    async def asyncTearDown(self) -> None:
        await self.client.close()

    async def test_context_manager_submit_and_wait(self) -> None:
        assert DAEMON is not None
        async with triage.AsyncClient(DAEMON.sock, timeout=10) as c:
            job = await c.submit(["true"], name="aio-true")
            self.assertEqual(job.state, "queued")
            done = await c.wait(job.id, timeout=JOB_S)
            self.assertTrue(done.terminal)
            self.assertTrue(done.succeeded)
            self.assertEqual(done.exit_code, 0)

    async def test_pipelining(self) -> None:
        jobs = await asyncio.gather(*(
            self.client.submit(["true"], name=f"aio-pipe-{i}", hold=True)
            for i in range(50)))
        ids = [j.id for j in jobs]
        self.assertEqual(len(set(ids)), 50)
        got = await asyncio.gather(*(self.client.get(i) for i in ids))
        self.assertEqual([g.id for g in got], ids)
        self.assertTrue(all(g.held for g in got))
        # A wait in flight does not hold up the requests behind it.
        waiting = asyncio.ensure_future(self.client.wait(ids[0], timeout=JOB_S))
        self.assertIsInstance(await self.client.stats(), dict)
        self.assertFalse(waiting.done())
        await asyncio.gather(*(self.client.cancel(i) for i in ids))
        done = await waiting
        self.assertEqual(done.state, "canceled")

    async def test_errors(self) -> None:
        with self.assertRaises(triage.NoSuchJob):
            await self.client.get(987654321)
        with self.assertRaises(triage.InvalidParams) as cm:
            await self.client.submit(["true"], priority="no-such-priority")
        self.assertEqual(cm.exception.field, "priority")
        # The connection is still good after errors.
        self.assertIsInstance(await self.client.stats(), dict)

    async def test_no_socket(self) -> None:
        with self.assertRaises(triage.DaemonUnavailable):
            async with triage.AsyncClient("/nonexistent/triage.sock"):
                pass

    async def test_watch_yields_event(self) -> None:
        async with self.client.watch() as w:
            job = await self.client.submit(["true"], name="aio-watch")
            loop = asyncio.get_running_loop()
            deadline = loop.time() + JOB_S
            seen = []
            while True:
                event = await w.next(timeout=max(0.0, deadline - loop.time()))
                if event.job is not None and event.job.id == job.id:
                    seen.append(event.job.state)
                    if event.job.terminal:
                        break
            self.assertEqual(seen[0], "queued")
            self.assertEqual(seen[-1], "succeeded")

    async def test_output(self) -> None:
        job = await self.client.submit(["sh", "-c", "printf 'a\\nb\\n'; printf e >&2"])
        await self.client.wait(job.id, timeout=JOB_S)
        out = b"".join([c async for c in self.client.output(job.id)])
        self.assertEqual(out, b"a\nb\n")
        err = b"".join([c async for c in self.client.output(job.id, "stderr")])
        self.assertEqual(err, b"e")

    async def test_output_follow(self) -> None:
        job = await self.client.submit(
            ["sh", "-c", "for i in 1 2 3; do echo $i; sleep 0.1; done"])
        out = b"".join([c async for c in
                        self.client.output(job.id, follow=True)])
        self.assertEqual(out, b"1\n2\n3\n")


if __name__ == "__main__":
    unittest.main()
