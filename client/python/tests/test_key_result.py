"""Idempotent submits (submit's ``key``) and result payloads ($TRIAGE_RESULT)
against a real daemon, through both clients. A daemon that has neither yet
is told apart honestly (it refuses the param ``key`` with -32602 naming it;
its jobs get no $TRIAGE_RESULT) and these tests are skipped, saying so."""

from __future__ import annotations

import asyncio
import os
import unittest

from harness import JOB_S, Daemon, key_support, need_triaged, result_support

import triage

DAEMON: Daemon | None = None
NO_KEY: str | None = None
NO_RESULT: str | None = None


def setUpModule() -> None:
    global DAEMON, NO_KEY, NO_RESULT
    need_triaged()
    DAEMON = Daemon()
    with triage.Client(DAEMON.sock, timeout=10) as c:
        NO_KEY = key_support(c)
        NO_RESULT = result_support(c)


def tearDownModule() -> None:
    if DAEMON is not None:
        DAEMON.close()


def unique(what: str) -> str:
    return f"{what}-{os.getpid()}-{os.urandom(4).hex()}"


class KeyTest(unittest.TestCase):
    def setUp(self) -> None:
        if NO_KEY:
            self.skipTest(NO_KEY)
        assert DAEMON is not None
        self.client = triage.Client(DAEMON.sock, timeout=10)
        self.addCleanup(self.client.close)

    def test_same_key_returns_the_job(self) -> None:
        key = unique("order")
        first = self.client.submit(["true"], key=key, hold=True)
        self.assertEqual((first.key, first.existing), (key, False))
        again = self.client.submit(["false"], key=key, name="other")
        self.assertEqual(again.id, first.id)
        self.assertTrue(again.existing)
        self.assertEqual(again.key, key)
        # It is the first job, untouched by the second submit's params.
        self.assertEqual(again.argv, ["true"])
        self.assertTrue(again.held)
        # get and list show the key, never "existing".
        got = self.client.get(first.id)
        self.assertEqual((got.key, got.existing), (key, False))
        # Another key is another job.
        other = self.client.submit(["true"], key=unique("order"), hold=True)
        self.assertNotEqual(other.id, first.id)
        self.assertEqual(other.existing, False)
        for j in (first, other):
            self.client.cancel(j.id)

    def test_key_is_free_again_once_the_job_is_removed(self) -> None:
        key = unique("once")
        first = self.client.submit(["true"], key=key)
        self.client.wait(first.id, timeout=JOB_S)
        self.assertTrue(self.client.submit(["true"], key=key).existing)
        self.assertEqual(self.client.remove(first.id), [first.id])
        second = self.client.submit(["true"], key=key)
        self.assertNotEqual(second.id, first.id)
        self.assertFalse(second.existing)
        self.client.wait(second.id, timeout=JOB_S)

    def test_key_bounds(self) -> None:
        for bad in ("", "k" * 257):
            with self.subTest(length=len(bad)):
                with self.assertRaises(triage.InvalidParams) as cm:
                    self.client.submit(["true"], key=bad)
                self.assertEqual(cm.exception.field, "key")
        job = self.client.submit(["true"], key="é" * 128)  # 256 bytes
        self.assertEqual(job.key, "é" * 128)
        self.client.wait(job.id, timeout=JOB_S)

    def test_async_concurrent_submits_make_one_job(self) -> None:
        assert DAEMON is not None
        sock = DAEMON.sock

        async def go() -> list[triage.Job]:
            async with triage.AsyncClient(sock, timeout=10) as c:
                key = unique("race")
                jobs = await asyncio.gather(*(
                    c.submit(["true"], key=key, hold=True) for _ in range(10)))
                await c.cancel(jobs[0].id)
                return jobs
        jobs = asyncio.run(go())
        self.assertEqual(len({j.id for j in jobs}), 1)
        self.assertEqual(sum(not j.existing for j in jobs), 1)


class ResultTest(unittest.TestCase):
    def setUp(self) -> None:
        if NO_RESULT:
            self.skipTest(NO_RESULT)
        assert DAEMON is not None
        self.client = triage.Client(DAEMON.sock, timeout=10)
        self.addCleanup(self.client.close)

    def run_job(self, script: str) -> triage.Job:
        job = self.client.submit(["sh", "-c", script])
        done = self.client.wait(job.id, timeout=JOB_S)
        self.assertTrue(done.terminal, done.raw)
        return done

    def test_json_result(self) -> None:
        done = self.run_job('printf \'{"rows": 3}\' > "$TRIAGE_RESULT"')
        self.assertEqual(done.result, b'{"rows": 3}')
        self.assertEqual(done.result_json(), {"rows": 3})
        self.assertFalse(done.result_truncated)
        # get and list carry it too.
        self.assertEqual(self.client.get(done.id).result, b'{"rows": 3}')

    def test_binary_result(self) -> None:
        done = self.run_job(r'printf "\377\376ok" > "$TRIAGE_RESULT"')
        self.assertEqual(done.result, b"\xff\xfeok")

    def test_no_result_written(self) -> None:
        done = self.run_job("true")
        self.assertIsNone(done.result)
        self.assertFalse(done.result_truncated)

    def test_failed_job_result(self) -> None:
        done = self.run_job('printf partial > "$TRIAGE_RESULT"; exit 3')
        self.assertEqual((done.state, done.result), ("failed", b"partial"))

    def test_large_result_is_cut_or_whole(self) -> None:
        # 4 MiB: whatever max_result is, the payload is a prefix of what was
        # written, and result_truncated says whether it is all of it.
        size = 4 << 20
        done = self.run_job(f'head -c {size} /dev/zero | tr "\\0" x > '
                            '"$TRIAGE_RESULT"')
        assert done.result is not None
        self.assertEqual(done.result, b"x" * len(done.result))
        self.assertEqual(done.result_truncated, len(done.result) < size)

    def test_async_result(self) -> None:
        assert DAEMON is not None
        sock = DAEMON.sock

        async def go() -> triage.Job:
            async with triage.AsyncClient(sock, timeout=10) as c:
                job = await c.submit(["sh", "-c",
                                      'echo \'["a"]\' > "$TRIAGE_RESULT"'])
                return await c.wait(job.id, timeout=JOB_S)
        self.assertEqual(asyncio.run(go()).result_json(), ["a"])


if __name__ == "__main__":
    unittest.main()
