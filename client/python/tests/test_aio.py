"""Tests of triage.AsyncClient against a real daemon (see test_client)."""

from __future__ import annotations

import asyncio
import unittest

from harness import JOB_S, Daemon, need_triaged

import triage

DAEMON: Daemon | None = None


def setUpModule() -> None:
    global DAEMON
    need_triaged()
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

    async def test_every_other_method(self) -> None:
        c = self.client
        a = await c.submit(["sh", "-c", "exit 2"], labels={"aio": "all"},
                           retries=0, name="aio-all")
        self.assertEqual(a.name, "aio-all")
        b = await c.submit(["sleep", "60"], labels={"aio": "all"}, hold=True)
        self.assertEqual([j.id for j in await c.list(labels={"aio": "all"})],
                         [a.id, b.id])
        done = await c.wait_all([a.id], timeout=JOB_S)
        self.assertEqual([(j.id, j.state) for j in done], [(a.id, "failed")])
        self.assertEqual((await c.retry(a.id)).attempt, 2)
        self.assertEqual((await c.wait(a.id, timeout=JOB_S)).attempt, 2)
        self.assertEqual(await c.retry(filter={"ids": [a.id]}), [a.id])
        await c.wait(a.id, timeout=JOB_S)
        self.assertEqual(await c.remove(a.id), [a.id])
        with self.assertRaises(triage.NoSuchJob):
            await c.get(a.id)
        self.assertEqual((await c.update(b.id, name="renamed")).name, "renamed")
        self.assertFalse((await c.release(b.id)).held)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + JOB_S
        while not (await c.freeze(b.id)).get("frozen"):
            self.assertLess(loop.time(), deadline, "the job never froze")
            await asyncio.sleep(0.01)
        self.assertEqual(await c.thaw(filter={"ids": [b.id]}), [b.id])
        self.assertFalse((await c.get(b.id))["frozen"])
        self.assertEqual(await c.cancel(filter={"labels": {"aio": "all"}},
                                        signal="SIGKILL"), [b.id])
        self.assertEqual((await c.wait(b.id, timeout=JOB_S)).state, "canceled")
        h = await c.submit(["true"], hold=True)
        self.assertTrue((await c.hold(h.id)).held)
        self.assertEqual((await c.cancel(h.id)).state, "canceled")
        paused = await c.pause("tiny")
        self.assertTrue(next(p for p in paused["priorities"]
                             if p["name"] == "tiny")["paused"])
        resumed = await c.resume()
        self.assertFalse(any(p["paused"] for p in resumed["priorities"]))
        self.assertIsNone(await c.reload())

    async def test_many_tasks_share_one_client(self) -> None:
        # Gathered from many tasks at once, replies find their callers.
        async def one(i: int) -> None:
            job = await self.client.submit(["true"], name=f"t{i}", hold=True)
            got = await self.client.get(job.id)
            self.assertEqual((got.id, got.name), (job.id, f"t{i}"))
            await self.client.cancel(job.id)
        await asyncio.gather(*(one(i) for i in range(40)))
        self.assertEqual(self.client.pending, 0)


if __name__ == "__main__":
    unittest.main()
