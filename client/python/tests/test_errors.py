"""Every error class of the client, raised for real: each error code of
triage-protocol(7) (ERRORS) provoked on a real daemon through both the sync
and the async client, and the client's own ProtocolError and
DaemonUnavailable."""

from __future__ import annotations

import asyncio
import json
import os
import pwd
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from typing import Any, Awaitable, Callable

from harness import HERE, JOB_S, READY_S, Daemon, need_triaged, poll

import triage

DAEMON: Daemon | None = None


def setUpModule() -> None:
    global DAEMON
    need_triaged()
    DAEMON = Daemon()


def tearDownModule() -> None:
    if DAEMON is not None:
        DAEMON.close()


def run(coro: Awaitable[Any]) -> Any:
    async def main() -> Any:
        return await coro
    return asyncio.run(main())


class ErrorCodesTest(unittest.TestCase):
    """Each code, through Client and through AsyncClient: the same class,
    code and data; and the connection still serves after it."""

    def setUp(self) -> None:
        assert DAEMON is not None
        self.daemon = DAEMON
        self.client = triage.Client(DAEMON.sock, timeout=10)
        self.addCleanup(self.client.close)

    def both(self, cls: type[triage.TriageError], code: int,
             sync: Callable[[triage.Client], Any],
             aio: Callable[[triage.AsyncClient], Awaitable[Any]]
             ) -> tuple[triage.TriageError, triage.TriageError]:
        """sync(client) and aio(async client) must each raise cls with
        code; each client must then still answer stats."""
        with self.assertRaises(cls) as cm:
            sync(self.client)
        self.assertEqual((cm.exception.code, cm.exception.CODE), (code, code))
        self.assertIsInstance(self.client.stats(), dict)
        first = cm.exception

        async def go() -> triage.TriageError:
            async with triage.AsyncClient(self.daemon.sock, timeout=10) as c:
                with self.assertRaises(cls) as acm:
                    await aio(c)
                self.assertIsInstance(await c.stats(), dict)
                return acm.exception
        second = asyncio.run(go())
        self.assertEqual(second.code, code)
        self.assertEqual(type(first), type(second))
        return first, second

    def test_parse_error(self) -> None:
        # A NUL in a string: the daemon cannot read the request (its reply
        # has a null id), which the client pins on the one request pending.
        errs = self.both(triage.ParseError, -32700,
                         lambda c: c.submit(["echo", "a\x00b"]),
                         lambda c: c.submit(["echo", "a\x00b"]))
        self.assertIn("u0000", errs[0].message)

    def test_invalid_request(self) -> None:
        errs = self.both(triage.InvalidRequest, -32600,
                         lambda c: c.call(5),  # type: ignore[arg-type]
                         lambda c: c.call(5))  # type: ignore[arg-type]
        self.assertEqual(errs[0].data.get("field"), "method")

    def test_unknown_method(self) -> None:
        self.both(triage.UnknownMethod, -32601,
                  lambda c: c.call("no_such_method"),
                  lambda c: c.call("no_such_method"))

    def test_invalid_params(self) -> None:
        errs = self.both(triage.InvalidParams, -32602,
                         lambda c: c.submit(["true"], priority="nope"),
                         lambda c: c.submit(["true"], priority="nope"))
        self.assertEqual([e.field for e in errs],  # type: ignore[attr-defined]
                         ["priority", "priority"])

    def test_internal_error(self) -> None:
        # Output that cannot be read: the capture file of a job that never
        # ran replaced by a symlink to itself (open fails with ELOOP).
        job = self.client.submit(["true"], hold=True)
        self.addCleanup(self.client.cancel, job.id)
        path = self.daemon.state / "output" / f"{job.id}.stdout"
        os.symlink(path.name, path)
        self.addCleanup(path.unlink)
        self.both(triage.InternalError, -32603,
                  lambda c: list(c.output(job.id)),
                  lambda c: _drain(c.output(job.id)))

    def test_no_such_job(self) -> None:
        self.both(triage.NoSuchJob, -32001,
                  lambda c: c.get(10 ** 12), lambda c: c.wait(10 ** 12))
        self.assertIs(triage.NotFound, triage.NoSuchJob)

    def test_permission_denied(self) -> None:
        # Root and the daemon's user are admins: only another user can be
        # refused, so this needs root to become one (nobody).
        if os.geteuid() != 0:
            self.skipTest("needs root, to connect as another user")
        nobody = pwd.getpwnam("nobody")
        # The daemon's dir lets others reach the socket (mode 0666).
        os.chmod(self.daemon.dir, 0o711)
        code = f"""
import asyncio, sys
sys.path.insert(0, {str(HERE.parent)!r})
import triage
for go in ("sync", "async"):
    try:
        if go == "sync":
            with triage.Client({self.daemon.sock!r}, timeout=10) as c:
                c.pause()
        else:
            async def main():
                async with triage.AsyncClient({self.daemon.sock!r}, timeout=10) as c:
                    await c.pause()
            asyncio.run(main())
        print(go, "no error")
    except triage.TriageError as exc:
        print(go, type(exc).__name__, exc.code)
"""
        out = subprocess.run([sys.executable, "-c", code], user=nobody.pw_uid,
                             group=nobody.pw_gid, extra_groups=[],
                             capture_output=True, text=True, timeout=JOB_S,
                             cwd="/")
        self.assertEqual(out.stdout.split("\n"),
                         ["sync PermissionDenied -32002",
                          "async PermissionDenied -32002", ""], out.stderr)
        self.assertIs(triage.Forbidden, triage.PermissionDenied)

    def test_queue_full(self) -> None:
        # "tiny" queues one job at most.
        first = self.client.submit(["true"], priority="tiny", hold=True)
        self.addCleanup(self.client.cancel, first.id)
        errs = self.both(triage.QueueFull, -32003,
                         lambda c: c.submit(["true"], priority="tiny"),
                         lambda c: c.submit(["true"], priority="tiny"))
        self.assertIn("max_queued", errs[0].message)
        self.assertIs(triage.LimitExceeded, triage.QueueFull)

    def test_wrong_state(self) -> None:
        job = self.client.submit(["sleep", "60"], hold=True)
        self.addCleanup(self.client.cancel, job.id)
        self.both(triage.WrongState, -32005,
                  lambda c: c.remove(job.id), lambda c: c.retry(job.id))

    def test_config_rejected(self) -> None:
        self.daemon.conf.write_text(self.daemon.config_text + "\nbogus\n")
        try:
            errs = self.both(triage.ConfigRejected, -32006,
                             lambda c: c.reload(), lambda c: c.reload())
        finally:
            self.daemon.conf.write_text(self.daemon.config_text)
        self.assertTrue(errs[0].errors)  # type: ignore[attr-defined]
        self.assertIsNone(self.client.reload())

    def test_unknown_code_still_raises(self) -> None:
        err = triage.errors.error_from_reply(
            {"code": -32099, "message": "from a newer daemon", "data": {"x": 1}})
        self.assertIs(type(err), triage.TriageError)
        self.assertEqual((err.code, err.data), (-32099, {"x": 1}))


async def _drain(chunks: Any) -> list[bytes]:
    return [c async for c in chunks]


class ShuttingDownTest(unittest.TestCase):
    """-32004: submit while the daemon stops (shutdown = finish lets a
    running job run to its end, the connections open meanwhile)."""

    def test_shutting_down(self) -> None:
        need_triaged()
        daemon = Daemon("shutdown = finish\n")
        self.addCleanup(daemon.close)

        async def go() -> None:
            c = triage.Client(daemon.sock, timeout=10)
            async with triage.AsyncClient(daemon.sock, timeout=10) as ac:
                job = c.submit(["sleep", "60"])
                poll(lambda: c.get(job.id).state == "running", JOB_S,
                     "the job to run")
                daemon.proc.send_signal(signal.SIGTERM)

                def refused() -> bool:
                    try:
                        held = c.submit(["true"], hold=True)
                    except triage.ShuttingDown as exc:
                        self.assertEqual(exc.code, -32004)
                        return True
                    c.cancel(held.id)
                    return False
                poll(refused, READY_S, "submit to be refused")
                with self.assertRaises(triage.ShuttingDown):
                    await ac.submit(["true"])
                c.cancel(job.id)
            c.close()
            daemon.proc.wait(timeout=READY_S)
        asyncio.run(go())


class FakeDaemon:
    """A Unix socket that answers each request line with reply(line), and
    counts its connections: for what a real daemon never does."""

    def __init__(self, reply: Callable[[bytes], bytes]) -> None:
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, "sock")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(self.path)
        self.sock.listen()
        self.reply = reply
        self.accepted = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            threading.Thread(target=self._talk, args=(conn,),
                             daemon=True).start()

    def _talk(self, conn: socket.socket) -> None:
        with conn, conn.makefile("rwb") as f:
            for line in f:
                f.write(self.reply(line))
                f.flush()

    def close(self) -> None:
        self.sock.close()
        self.dir.cleanup()


class ClientSideErrorsTest(unittest.TestCase):
    def test_protocol_error_on_garbage(self) -> None:
        fake = FakeDaemon(lambda line: b"this is not json\n")
        self.addCleanup(fake.close)
        with triage.Client(fake.path, timeout=5, reconnect=0) as c:
            with self.assertRaises(triage.ProtocolError):
                c.stats()

        async def go() -> None:
            async with triage.AsyncClient(fake.path, timeout=5,
                                          reconnect=0) as ac:
                with self.assertRaises(triage.ProtocolError) as cm:
                    await ac.stats()
                self.assertIn("not JSON", str(cm.exception))
        asyncio.run(go())

    def test_error_reply_does_not_reconnect(self) -> None:
        # An error reply to a wait is that wait's answer: raised as it is,
        # on the same connection, whatever reconnect allows.
        fake = FakeDaemon(lambda line: json.dumps({
            "jsonrpc": "2.0", "id": json.loads(line)["id"],
            "error": {"code": -32603, "message": "disk on fire",
                      "data": {}}}).encode() + b"\n")
        self.addCleanup(fake.close)
        with triage.Client(fake.path, timeout=5, reconnect=60) as c:
            for _ in range(3):
                with self.assertRaises(triage.InternalError):
                    c.wait(1)

        async def go() -> None:
            async with triage.AsyncClient(fake.path, timeout=5,
                                          reconnect=60) as ac:
                for _ in range(3):
                    with self.assertRaises(triage.InternalError):
                        await ac.wait(1)
        asyncio.run(go())
        self.assertEqual(fake.accepted, 2)

    def test_daemon_unavailable(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "nothing.sock")
            start = time.monotonic()
            with self.assertRaises(triage.DaemonUnavailable) as cm:
                triage.Client(path, reconnect=60)
            # Connecting at first is one attempt, whatever reconnect says.
            self.assertLess(time.monotonic() - start, 5)
            self.assertIsInstance(cm.exception, ConnectionError)
            self.assertEqual(cm.exception.path, path)
            self.assertIn("is triaged running?", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
