"""The README's example web app (examples/webapp.py), run for real: a triaged
of its own, the app on a free port talking to it, and urllib as its user:
POST a report, poll GET until it is done, check that the job ran. And the
READMEs show the file as it is."""

from __future__ import annotations

import json
import os
import re
import select
import subprocess
import sys
import time
import unittest
import urllib.error
import urllib.request
from typing import Any

from harness import HERE, JOB_S, READY_S, REPO, Daemon, key_support, need_triaged

import triage

APP = HERE.parent / "examples" / "webapp.py"


class WebAppTest(unittest.TestCase):
    def setUp(self) -> None:
        need_triaged()
        self.daemon = Daemon()
        self.addCleanup(self.daemon.close)
        env = dict(os.environ, PYTHONPATH=str(HERE.parent))
        self.app = subprocess.Popen(
            [sys.executable, str(APP), "--port", "0", "--socket",
             self.daemon.sock],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        self.addCleanup(self.stop_app)
        self.base = self.listening()

    def stop_app(self) -> None:
        self.app.terminate()
        self.app.wait(timeout=READY_S)
        assert self.app.stdout is not None and self.app.stderr is not None
        self.app.stdout.close()
        self.app.stderr.close()

    def listening(self) -> str:
        """The app's address, from its first line, read with a deadline."""
        assert self.app.stdout is not None
        deadline = time.monotonic() + READY_S
        line = b""
        while not line.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.app.stdout], [], [], left)[0]:
                self.fail("the app did not say where it listens")
            byte = os.read(self.app.stdout.fileno(), 1)
            if not byte:
                assert self.app.stderr is not None
                self.fail(f"the app exited: {self.app.stderr.read().decode()}")
            line += byte
        m = re.fullmatch(rb"listening on (http://127\.0\.0\.1:\d+)\n", line)
        assert m is not None, line
        return m.group(1).decode()

    def request(self, method: str, path: str, body: Any = None,
                headers: dict[str, str] | None = None) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data,
                                     method=method, headers=headers or {})
        try:
            with urllib.request.urlopen(req, timeout=JOB_S) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            with e:
                return e.code, json.loads(e.read())

    def poll_done(self, id: int) -> dict[str, Any]:
        deadline = time.monotonic() + JOB_S
        while True:
            status, report = self.request("GET", f"/reports/{id}")
            self.assertEqual(status, 200, report)
            if report["state"] in triage.TERMINAL_STATES:
                return report
            self.assertLess(time.monotonic(), deadline, report)
            time.sleep(0.05)

    def test_post_then_get_until_done(self) -> None:
        status, queued = self.request("POST", "/reports", {"n": 1000})
        self.assertEqual(status, 202, queued)
        self.assertIn(queued["state"], ("queued", "running"))
        report = self.poll_done(queued["id"])
        self.assertEqual((report["state"], report["exit_code"]),
                         ("succeeded", 0), report)
        self.assertEqual(report["output"], "summed 1000 squares\n")
        # The job the app made is a real one, with the app's label.
        with triage.Client(self.daemon.sock) as c:
            job = c.get(queued["id"])
            self.assertEqual((job.name, job.labels["app"]), ("report", "reports"))
            self.assertEqual(job.argv[-2:], ["--work", "1000"])
            no_result = job.result is None
        # The result, where the daemon has results (else null).
        if no_result:
            self.assertIsNone(report["result"])
        else:
            self.assertEqual(report["result"],
                             {"n": 1000, "sum": sum(i * i for i in range(1000))})

    def test_errors_become_statuses(self) -> None:
        self.assertEqual(self.request("GET", "/reports/999999")[0], 404)
        self.assertEqual(self.request("GET", "/reports/nope")[0], 404)

    def test_idempotency_key(self) -> None:
        headers = {"Idempotency-Key": f"report-{os.getpid()}"}
        with triage.Client(self.daemon.sock) as c:
            unsupported = key_support(c)
        status, first = self.request("POST", "/reports", {"n": 10}, headers)
        if unsupported:
            # The daemon refuses the param: the app says so, 400 naming it.
            self.assertEqual((status, first.get("field")), (400, "key"), first)
            self.skipTest(unsupported)
        self.assertEqual(status, 202, first)
        status, again = self.request("POST", "/reports", {"n": 10}, headers)
        self.assertEqual((status, again["id"]), (200, first["id"]))
        self.assertEqual(self.poll_done(first["id"])["state"], "succeeded")


class ReadmeTest(unittest.TestCase):
    """Both READMEs show examples/webapp.py as it is: the python block
    after the line naming it is the file, byte for byte."""

    def block_after(self, readme: str, marker: str) -> str:
        text = (REPO / readme).read_text()
        self.assertIn(marker, text, readme)
        m = re.search(re.escape(marker) + r".*?\n```python\n(.*?)```\n",
                      text, re.S)
        assert m is not None, f"no python block after {marker!r} in {readme}"
        return m.group(1)

    def test_readmes_show_the_file(self) -> None:
        app = APP.read_text()
        for readme in ("README.md", "client/python/README.md"):
            with self.subTest(readme=readme):
                self.assertEqual(self.block_after(readme, "examples/webapp.py"),
                                 app)


if __name__ == "__main__":
    unittest.main()
