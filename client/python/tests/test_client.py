"""Tests of the triage Python client against a real daemon: build/bin/triaged
of this checkout, in a temporary directory with a config and socket of its own."""

from __future__ import annotations

import os
import tempfile
import threading
import time
import unittest

from harness import JOB_S, Daemon, need_triaged, poll

import triage

DAEMON: Daemon | None = None


def setUpModule() -> None:
    global DAEMON
    need_triaged()
    DAEMON = Daemon()


def tearDownModule() -> None:
    if DAEMON is not None:
        DAEMON.close()


class ClientTest(unittest.TestCase):
    def setUp(self) -> None:
        assert DAEMON is not None
        self.client = triage.Client(DAEMON.sock, timeout=10)
        self.addCleanup(self.client.close)

    def test_submit_and_wait_succeeds(self) -> None:
        job = self.client.submit(["true"], name="py-true", labels={"t": "1"})
        self.assertIsInstance(job, triage.Job)
        self.assertIn(job.state, ("queued", "running"))
        self.assertEqual(job.name, "py-true")
        self.assertEqual(job.labels, {"t": "1"})
        self.assertEqual(job.cwd, os.getcwd())  # sent as the CLI does
        done = self.client.wait(job.id, timeout=JOB_S)
        self.assertEqual(done.state, "succeeded", done.raw)
        self.assertEqual(done.exit_code, 0)
        self.assertEqual(done.attempt, 1)
        self.assertTrue(done.terminal)
        self.assertEqual(self.client.get(job.id).state, "succeeded")

    def test_failure_exit_code(self) -> None:
        job = self.client.submit(["sh", "-c", "exit 3"])
        done = self.client.wait(job.id, timeout=JOB_S)
        self.assertEqual((done.state, done.exit_code), ("failed", 3))

    def test_env_is_the_callers(self) -> None:
        os.environ["TRIAGE_PY_TEST"] = "caller"
        self.addCleanup(os.environ.pop, "TRIAGE_PY_TEST", None)
        job = self.client.submit(["sh", "-c", 'printf %s "$TRIAGE_PY_TEST"'])
        self.client.wait(job.id, timeout=JOB_S)
        self.assertEqual(b"".join(self.client.output(job.id)), b"caller")
        job = self.client.submit(["sh", "-c", 'printf %s "$A"'],
                                 env={"A": "x", "PATH": "/usr/bin:/bin"})
        self.client.wait(job.id, timeout=JOB_S)
        self.assertEqual(b"".join(self.client.output(job.id)), b"x")

    def test_get_missing_raises_not_found(self) -> None:
        with self.assertRaises(triage.NotFound) as cm:
            self.client.get(10 ** 12)
        self.assertEqual(cm.exception.code, -32001)
        self.assertIs(triage.NotFound, triage.NoSuchJob)

    def test_invalid_params_name_the_field(self) -> None:
        with self.assertRaises(triage.InvalidParams) as cm:
            self.client.submit(["true"], priority="no-such-priority")
        self.assertEqual(cm.exception.field, "priority")
        with self.assertRaises(triage.InvalidParams) as cm:
            self.client.submit([])
        self.assertEqual(cm.exception.field, "argv")
        with self.assertRaises(triage.InvalidParams) as cm:
            self.client.submit(["true"], bogus_param=1)
        self.assertEqual(cm.exception.field, "bogus_param")

    def test_cancel(self) -> None:
        job = self.client.submit(["sleep", "60"])
        self.client.cancel(job.id)
        done = self.client.wait(job.id, timeout=JOB_S)
        self.assertEqual(done.state, "canceled", done.raw)
        # Canceling an ended job is no error: it comes back unchanged.
        self.assertEqual(self.client.cancel(job.id).state, "canceled")

    def test_hold_and_release(self) -> None:
        job = self.client.submit(["true"], hold=True)
        self.assertTrue(job.held)
        self.assertEqual(job.state, "queued")
        self.assertEqual(job.pending_reason, "held")
        # Still queued while held: a wait that times out says so.
        self.assertEqual(self.client.wait(job.id, timeout=0.2).state, "queued")
        released = self.client.release(job.id)
        self.assertFalse(released.held)
        self.assertEqual(self.client.wait(job.id, timeout=JOB_S).state,
                         "succeeded")
        other = self.client.submit(["true"], hold=True)
        held = self.client.hold(other.id)
        self.assertTrue(held.held)
        self.assertEqual(self.client.release(filter={"ids": [other.id]}),
                         [other.id])
        self.client.wait(other.id, timeout=JOB_S)

    def test_retry_and_remove(self) -> None:
        job = self.client.submit(["false"])
        self.client.wait(job.id, timeout=JOB_S)
        again = self.client.retry(job.id)
        self.assertEqual(again.attempt, 2)
        done = self.client.wait(job.id, timeout=JOB_S)
        self.assertEqual((done.state, done.attempt), ("failed", 2))
        with self.assertRaises(triage.WrongState):
            self.client.remove(self.client.submit(["sleep", "60"],
                                                  hold=True).id)
        self.assertEqual(self.client.remove(job.id), [job.id])
        with self.assertRaises(triage.NoSuchJob):
            self.client.get(job.id)

    def test_update(self) -> None:
        job = self.client.submit(["true"], hold=True)
        updated = self.client.update(job.id, name="renamed", priority="high")
        self.assertEqual((updated.name, updated.priority), ("renamed", "high"))
        self.client.cancel(job.id)

    def test_output(self) -> None:
        job = self.client.submit(
            ["sh", "-c", "printf 'hello\\n'; printf '\\377\\376'; "
             "printf err >&2"])
        self.client.wait(job.id, timeout=JOB_S)
        self.assertEqual(b"".join(self.client.output(job.id)),
                         b"hello\n\xff\xfe")
        self.assertEqual(b"".join(self.client.output(job.id, "stderr")),
                         b"err")
        # Paging by offset: small pages give the same bytes.
        self.assertEqual(b"".join(self.client.output(job.id, limit=2)),
                         b"hello\n\xff\xfe")

    def test_output_follow(self) -> None:
        job = self.client.submit(
            ["sh", "-c", "echo one; sleep 0.5; echo two"])
        got = b"".join(self.client.output(job.id, follow=True))
        self.assertEqual(got, b"one\ntwo\n")

    def test_list(self) -> None:
        job = self.client.submit(["true"], labels={"list": "me"})
        jobs = self.client.list(labels={"list": "me"})
        self.assertEqual([j.id for j in jobs], [job.id])
        self.client.wait(job.id, timeout=JOB_S)

    def test_stats(self) -> None:
        stats = self.client.stats()
        self.assertEqual(stats["slots"], 2)
        self.assertIn("jobs", stats)
        self.assertEqual({p["name"] for p in stats["priorities"]},
                         {"high", "normal", "tiny"})
        self.assertIsInstance(stats["version"], str)

    def test_submit_params_reach_the_job(self) -> None:
        node = self.client.stats()["node"]
        first = self.client.submit(["true"], name="dep")
        job = self.client.submit(
            ["sh", "-c", "echo out; echo err >&2"], priority="high",
            name="params", timeout=30, retries=2, after=[first.id],
            after_any=[first.id], memory=64 << 20, slots=1, nice=5,
            merge_output=True, begin_at="2000-01-01T00:00:00Z", node=node,
            labels={"a": "b"}, env={"PATH": "/usr/bin:/bin"}, cwd="/")
        self.assertEqual((job.priority, job.name, job.labels, job.cwd),
                         ("high", "params", {"a": "b"}, "/"))
        self.assertEqual((job["timeout"], job["retries"], job["after"],
                          job["after_any"], job["memory"], job["nice"],
                          job["merge_output"], job["pinned_node"]),
                         (30, 2, [first.id], [first.id], 64 << 20, 5, True,
                          node))
        done = self.client.wait(job.id, timeout=JOB_S)
        self.assertEqual(done.state, "succeeded", done.raw)
        # merge_output: stderr went into stdout's capture.
        self.assertEqual(b"".join(self.client.output(job.id)), b"out\nerr\n")
        # DAEMON_DEFAULT sends no env/cwd: the daemon's minimal ones.
        job = self.client.submit(["sh", "-c", "printf %s \"$PATH\""],
                                 env=triage.DAEMON_DEFAULT,
                                 cwd=triage.DAEMON_DEFAULT)
        self.client.wait(job.id, timeout=JOB_S)
        self.assertEqual(b"".join(self.client.output(job.id)),
                         b"/usr/local/bin:/usr/bin:/bin")

    def test_wait_all_and_timeout(self) -> None:
        a = self.client.submit(["true"])
        b = self.client.submit(["sh", "-c", "exit 4"])
        done = self.client.wait_all([b.id, a.id], timeout=JOB_S)
        self.assertEqual([(j.id, j.state) for j in done],
                         [(b.id, "failed"), (a.id, "succeeded")])
        held = self.client.submit(["true"], hold=True)
        start = time.monotonic()
        self.assertEqual(self.client.wait(held.id, timeout=0.3).state,
                         "queued")
        self.assertGreaterEqual(time.monotonic() - start, 0.25)
        self.client.cancel(held.id)

    def test_cancel_by_filter_with_signal(self) -> None:
        jobs = [self.client.submit(["sleep", "60"], labels={"batch": "sig"})
                for _ in range(2)]
        ids = sorted(self.client.cancel(filter={"labels": {"batch": "sig"}},
                                        signal="SIGKILL"))
        self.assertEqual(ids, sorted(j.id for j in jobs))
        for j in jobs:
            self.assertEqual(self.client.wait(j.id, timeout=JOB_S).state,
                             "canceled")
        with self.assertRaises(triage.InvalidParams) as cm:
            self.client.cancel(jobs[0].id, signal="SIGNOPE")
        self.assertEqual(cm.exception.field, "signal")
        with self.assertRaises(TypeError):
            self.client.cancel()

    def test_list_pages(self) -> None:
        ids = [self.client.submit(["true"], hold=True,
                                  labels={"page": "p"}).id for _ in range(5)]
        seen: list[int] = []
        after = 0
        while True:
            page = self.client.list(labels={"page": "p"}, limit=2,
                                    after_id=after)
            if not page:
                break
            self.assertLessEqual(len(page), 2)
            seen += [j.id for j in page]
            after = page[-1].id
        self.assertEqual(seen, ids)
        self.assertEqual([j.id for j in self.client.list(
            state="queued", held=True, labels={"page": "p"})], ids)
        self.assertEqual(sorted(self.client.cancel(filter={"labels": {"page": "p"}})), ids)
        self.assertEqual(sorted(self.client.remove(filter={"labels": {"page": "p"}})), ids)

    def test_update_begin_at(self) -> None:
        job = self.client.submit(["true"], begin_at="2999-01-01T00:00:00Z")
        self.assertEqual(job.pending_reason, "begin_at")
        job = self.client.update(job.id, begin_at=None, labels={"u": "1"},
                                 retries=1, timeout=5, nice=3)
        self.assertEqual((job.labels, job["retries"], job["timeout"],
                          job["nice"]), ({"u": "1"}, 1, 5, 3))
        self.assertEqual(self.client.wait(job.id, timeout=JOB_S).state,
                         "succeeded")
        with self.assertRaises(triage.WrongState):
            self.client.update(job.id, name="too-late")

    def test_freeze_and_thaw(self) -> None:
        job = self.client.submit(["sleep", "60"])
        # Freezing a job whose process is not reported started yet leaves
        # it as it is: ask until it took.
        poll(lambda: self.client.freeze(job.id).get("frozen"), JOB_S,
             "the job to freeze")
        self.assertTrue(self.client.get(job.id)["frozen"])
        self.assertEqual(self.client.thaw(filter={"ids": [job.id]}), [job.id])
        self.assertFalse(self.client.get(job.id)["frozen"])
        self.assertFalse(self.client.thaw(job.id)["frozen"])
        self.client.cancel(job.id)
        self.assertEqual(self.client.wait(job.id, timeout=JOB_S).state,
                         "canceled")

    def test_pause_and_resume(self) -> None:
        def tiny(stats: dict[str, object]) -> dict[str, object]:
            return next(p for p in stats["priorities"]  # type: ignore[attr-defined]
                        if p["name"] == "tiny")
        self.assertTrue(tiny(self.client.pause("tiny"))["paused"])
        job = self.client.submit(["true"], priority="tiny")
        self.assertEqual(self.client.wait(job.id, timeout=0.2).pending_reason,
                         "paused")
        self.assertFalse(tiny(self.client.resume("tiny"))["paused"])
        self.assertEqual(self.client.wait(job.id, timeout=JOB_S).state,
                         "succeeded")

    def test_reload(self) -> None:
        assert DAEMON is not None
        self.assertIsNone(self.client.reload())
        DAEMON.conf.write_text(DAEMON.config_text + "\n[priority.bad]\nrank = nope\n")
        try:
            with self.assertRaises(triage.ConfigRejected) as cm:
                self.client.reload()
            self.assertEqual(cm.exception.code, -32006)
            self.assertTrue(cm.exception.errors, cm.exception.data)
        finally:
            DAEMON.conf.write_text(DAEMON.config_text)
        self.assertIsNone(self.client.reload())

    def test_watch_sees_submitted_job(self) -> None:
        with self.client.watch() as watch:
            job = self.client.submit(["true"])
            states = []
            deadline = time.monotonic() + JOB_S
            while "succeeded" not in states:
                event = watch.next(timeout=max(0.0, deadline - time.monotonic()))
                self.assertEqual(event.method, "job")
                assert event.job is not None
                if event.job.id == job.id:
                    states.append(event.job.state)
        self.assertEqual(states[0], "queued")
        self.assertEqual(states[-1], "succeeded")

    def test_threads_share_one_client(self) -> None:
        # A pending wait on the shared connection does not hold up others.
        slow = self.client.submit(["sleep", "1"])
        results: dict[str, object] = {}

        def waiter() -> None:
            results["wait"] = self.client.wait(slow.id, timeout=JOB_S).state

        t = threading.Thread(target=waiter)
        t.start()
        ids = []
        for _ in range(20):
            ids.append(self.client.submit(["true"]).id)
        self.assertEqual([self.client.get(i).id for i in ids], ids)
        t.join(JOB_S)
        self.assertEqual(results.get("wait"), "succeeded")

        errors: list[BaseException] = []

        def worker() -> None:
            try:
                for _ in range(20):
                    self.client.stats()
                    with self.assertRaises(triage.NoSuchJob):
                        self.client.get(10 ** 12)
            except BaseException as exc:  # reported to the main thread
                errors.append(exc)

        threads = [threading.Thread(target=worker) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(JOB_S)
        self.assertEqual(errors, [])


class UnavailableTest(unittest.TestCase):
    def test_no_socket(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaises(triage.DaemonUnavailable) as cm:
                triage.Client(os.path.join(d, "nothing.sock"))
        self.assertIsInstance(cm.exception, ConnectionError)

    def test_socket_resolution(self) -> None:
        from triage._wire import socket_path
        saved = {k: os.environ.get(k) for k in ("TRIAGE_SOCKET",
                                                 "XDG_RUNTIME_DIR")}

        def restore() -> None:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        self.addCleanup(restore)
        os.environ["TRIAGE_SOCKET"] = "/x/env.sock"
        self.assertEqual(socket_path("/x/arg.sock"), "/x/arg.sock")
        self.assertEqual(socket_path(), "/x/env.sock")
        os.environ["TRIAGE_SOCKET"] = ""
        os.environ.pop("XDG_RUNTIME_DIR", None)
        self.assertEqual(socket_path(), "/run/triage/triage.sock")
        if os.geteuid() != 0:
            with tempfile.TemporaryDirectory() as d:
                os.environ["XDG_RUNTIME_DIR"] = d
                self.assertEqual(socket_path(), "/run/triage/triage.sock")
                os.mkdir(os.path.join(d, "triage"))
                self.assertEqual(socket_path(), d + "/triage/triage.sock")


if __name__ == "__main__":
    unittest.main()
