"""What the tests of the Python client share: a real triaged of this checkout
(build/bin/triaged, or $TRIAGED) in a temporary directory with a config and
socket of its own, started and stopped by the test, and polling with a
deadline (never a fixed sleep)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
# The package from this checkout, not one installed elsewhere.
sys.path.insert(0, str(HERE.parent))

import triage  # noqa: E402

TRIAGED = Path(os.environ.get("TRIAGED", REPO / "build" / "bin" / "triaged"))
# How long the daemon may take to answer at start, and a job to finish.
READY_S = 20.0
JOB_S = 20.0

# As tests/daemon/harness.c writes it (tsupport_daemon_conf), with more
# priorities: two so that a wrong name has something to be wrong against,
# and "tiny", which holds one queued job, to provoke QueueFull. The socket
# is 0666 so that a test can reach it as another user (PermissionDenied);
# the directory it is in says who may.
CONFIG = """\
[daemon]
socket = {sock}
state_dir = {state}
log_level = debug
slots = 2
socket_mode = 0666
{extra}
[priority.high]
rank = 0

[priority.normal]
rank = 10

[priority.tiny]
rank = 20
max_queued = 1
"""


def need_triaged() -> None:
    if not TRIAGED.exists():
        raise unittest.SkipTest(f"{TRIAGED} not built: run make first")


def poll(what: Callable[[], Any], deadline_s: float, msg: str) -> Any:
    """what()'s first true value, asked every 10 ms for up to deadline_s."""
    deadline = time.monotonic() + deadline_s
    while True:
        value = what()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {msg}")
        time.sleep(0.01)


class Daemon:
    """A triaged in a temp dir, logging to a file there, stopped at close.
    ``daemon_extra`` are more lines of its [daemon] section."""

    def __init__(self, daemon_extra: str = "") -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="triage-py-"))
        self.sock = str(self.dir / "sock")
        self.conf = self.dir / "triage.conf"
        self.state = self.dir / "state"
        self.config_text = CONFIG.format(sock=self.sock, state=self.state,
                                         extra=daemon_extra)
        self.conf.write_text(self.config_text)
        self.log = open(self.dir / "log", "wb")
        # The connections the readiness checks made, which connections()
        # leaves out.
        self.probes = 0
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
                    self.probes += 1
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

    def connections(self, pid: int | None = None) -> int:
        """How many connections process pid (default: this one, less the
        readiness checks of start) has made to the daemon so far, as its log
        says (log_level = debug logs each). The log is written as things
        happen: poll for a count to come."""
        mine = pid is None
        pid = os.getpid() if pid is None else pid
        self.log.flush()
        text = (self.dir / "log").read_text(errors="replace")
        n = len(re.findall(rf"client connected: uid \d+ gid \d+ pid {pid}\b",
                           text))
        return n - self.probes if mine else n

    def close(self) -> None:
        if self.proc.poll() is None:
            # A stopped daemon (SIGSTOP) would not hear the SIGTERM.
            self.proc.send_signal(signal.SIGCONT)
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, 9)
                self.proc.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def key_support(c: triage.Client) -> str | None:
    """None when the daemon takes submit's ``key``; else why not, for a
    skip: a daemon without it refuses the param, -32602 naming ``key``."""
    try:
        job = c.submit(["true"], key=f"probe-{os.getpid()}-{time.monotonic_ns()}",
                       hold=True, name="key-probe")
    except triage.InvalidParams as exc:
        if exc.field == "key":
            return (f"triaged {c.stats().get('version')} has no submit "
                    f"param key ({exc.message})")
        raise
    c.cancel(job.id)
    return None


def result_support(c: triage.Client) -> str | None:
    """None when the daemon gives jobs a result file; else why not: a job
    of a daemon with results has $TRIAGE_RESULT in its environment."""
    job = c.submit(["sh", "-c", 'test -n "$TRIAGE_RESULT"'],
                   name="result-probe")
    done = c.wait(job.id, timeout=JOB_S)
    if done.state == "succeeded":
        return None
    if done.state == "failed" and done.exit_code == 1:
        return (f"triaged {c.stats().get('version')} gives jobs no "
                "$TRIAGE_RESULT: no result payloads yet")
    raise AssertionError(f"the result probe ended {done.state}: {done.raw}")
