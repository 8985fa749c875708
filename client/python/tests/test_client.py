"""Tests of the triage Python client against a real daemon: build/bin/triaged
of this checkout, in a temporary directory with a config and socket of its own."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
# The package from this checkout, not one installed elsewhere.
sys.path.insert(0, str(HERE.parent))

import triage  # noqa: E402

TRIAGED = Path(os.environ.get("TRIAGED", REPO / "build" / "bin" / "triaged"))
# How long the daemon may take to answer at start, and a job to finish.
READY_S = 20.0
JOB_S = 20.0

# As tests/daemon/harness.c writes it (tsupport_daemon_conf), with two
# priorities so that a wrong name has something to be wrong against.
CONFIG = """\
[daemon]
socket = {sock}
state_dir = {state}
log_level = debug
slots = 2

[priority.high]
rank = 0

[priority.normal]
rank = 10
"""


class Daemon:
    """A triaged in a temp dir, logging to a file there, stopped at close."""

    def __init__(self, daemon_extra: str = "") -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="triage-py-"))
        self.sock = str(self.dir / "sock")
        self.conf = self.dir / "triage.conf"
        text = CONFIG.format(sock=self.sock, state=self.dir / "state")
        # More keys of [daemon] (e.g. shutdown = keep), right after it.
        text = text.replace("slots = 2\n", "slots = 2\n" + daemon_extra)
        self.conf.write_text(text)
        self.log = open(self.dir / "log", "wb")
        self.start()

    def start(self) -> None:
        """Starts triaged (again, on the same state dir) and waits until
        it answers."""
        env = dict(os.environ)
        env.pop("TRIAGE_SOCKET", None)
        self.proc = subprocess.Popen(
            [str(TRIAGED), "--config", str(self.conf)],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log,
            env=env, start_new_session=True)
        self._wait_ready()

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """Sends sig to the daemon alone (not its jobs) and reaps it."""
        self.proc.send_signal(sig)
        self.proc.wait(timeout=READY_S)

    def _wait_ready(self) -> None:
        # Poll until it answers, with a deadline: no fixed sleep.
        deadline = time.monotonic() + READY_S
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"triaged exited with {self.proc.returncode}"
                                   f" before it was ready:\n{self.log_text()}")
            try:
                with triage.Client(self.sock, timeout=2) as c:
                    c.stats()
                return
            except triage.DaemonUnavailable:
                pass
            if time.monotonic() > deadline:
                self.close()
                raise RuntimeError("triaged did not answer in time:\n"
                                   + self.log_text())
            time.sleep(0.02)

    def log_text(self) -> str:
        self.log.flush()
        return (self.dir / "log").read_text(errors="replace")[-4000:]

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, 9)
                self.proc.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


DAEMON: Daemon | None = None


def setUpModule() -> None:
    global DAEMON
    if not TRIAGED.exists():
        raise unittest.SkipTest(f"{TRIAGED} not built: run make first")
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
                         {"high", "normal"})

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
