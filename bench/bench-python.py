#!/usr/bin/python3
"""bench-python.py - `make bench`: how fast Python enqueues jobs into triaged,
through the triage package's sync and async clients, against the floor (raw
pipelined JSON-RPC written by hand over the Unix socket) and against rq's
Queue.enqueue into a local redis-server.

Each variant runs on a fresh server of its own per round, rounds taking
turns. triaged is started as bench/bench-daemon.c starts it (a temp state
dir, the queue bounds at their maximum) with every priority paused, so that
it only takes jobs in: each submit is {"argv": ["true"]} and nothing runs.
Prints its own table, then SUMMARY lines for bench/run.sh.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "client" / "python"))

import triage  # noqa: E402

JOBS, QUICK_JOBS = 20000, 5000
# rq and the sync client go one at a time: fewer say as much.
SERIAL_JOBS, QUICK_SERIAL_JOBS = 5000, 2000
ROUNDS, QUICK_ROUNDS = 3, 2
WINDOW = 256
TARGET = 1.5
READY_S = 20.0

# As bench-daemon.c writes it (tsupport_daemon_conf and its defaults).
CONF = """[daemon]
socket = {sock}
state_dir = {state}
log_level = warning
max_queued_per_user = 100000000

[priority.normal]
rank = 10
max_queued = 100000000
"""

SUBMIT = {"argv": ["true"]}


@dataclass
class Variant:
    name: str
    what: str
    jobs: int
    run: Callable[["Server", int], "Result"]
    rates: list[float] = field(default_factory=list)
    lat: list[float] = field(default_factory=list)
    error: str | None = None


@dataclass
class Result:
    seconds: float
    lat: list[float]


class Server:
    """A server of the benchmark's in a temp dir and its own process group,
    ready to take jobs; stop() kills the group and removes the dir."""

    sock: str
    proc: subprocess.Popen[bytes]
    dir: str

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=READY_S)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)

    def log(self) -> str:
        try:
            return Path(self.dir, "log").read_text(errors="replace")[-2000:]
        except OSError:
            return ""


def wait_ready(srv: Server, ready: Callable[[], bool]) -> None:
    deadline = time.monotonic() + READY_S
    while True:
        if srv.proc.poll() is not None:
            raise RuntimeError(f"exited with {srv.proc.returncode}: {srv.log()}")
        try:
            if ready():
                return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"not ready in {READY_S:g} s: {srv.log()}")
        time.sleep(0.02)


class Triaged(Server):
    def __init__(self, parent: str, triaged: str) -> None:
        self.dir = tempfile.mkdtemp(prefix="bench-python-", dir=parent)
        self.sock = os.path.join(self.dir, "sock")
        conf = os.path.join(self.dir, "triage.conf")
        Path(conf).write_text(CONF.format(sock=self.sock,
                                          state=os.path.join(self.dir, "state")))
        log = open(os.path.join(self.dir, "log"), "wb")
        self.proc = subprocess.Popen([triaged, "--config", conf],
                                     stdin=subprocess.DEVNULL, stdout=log,
                                     stderr=log, start_new_session=True)
        log.close()

        def ready() -> bool:
            try:
                with triage.Client(self.sock, timeout=2, reconnect=0) as c:
                    self.version = c.stats()["version"]
                    return True
            except triage.DaemonUnavailable:
                return False
        try:
            wait_ready(self, ready)
            with triage.Client(self.sock, timeout=10, reconnect=0) as c:
                stats = c.pause()
            if not all(p["paused"] for p in stats["priorities"]):
                raise RuntimeError("pause left a priority unpaused")
        except BaseException:
            self.stop()
            raise

    def count_queued(self) -> int:
        with triage.Client(self.sock, timeout=30, reconnect=0) as c:
            return int(c.stats()["jobs"]["queued"])


class Redis(Server):
    """redis-server with its default persistence (RDB snapshots by its
    default save rules, appendonly no), on a Unix socket, no TCP port."""

    def __init__(self, parent: str) -> None:
        self.dir = tempfile.mkdtemp(prefix="bench-redis-", dir=parent)
        self.sock = os.path.join(self.dir, "redis.sock")
        log = open(os.path.join(self.dir, "log"), "wb")
        self.proc = subprocess.Popen(
            ["redis-server", "--port", "0", "--unixsocket", self.sock,
             "--unixsocketperm", "700", "--dir", self.dir,
             "--daemonize", "no"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log,
            start_new_session=True)
        log.close()
        import redis
        self.conn = redis.Redis(unix_socket_path=self.sock)

        def ready() -> bool:
            # The socket file is there a moment before it listens.
            try:
                return os.path.exists(self.sock) and bool(self.conn.ping())
            except redis.exceptions.ConnectionError:
                return False
        try:
            wait_ready(self, ready)
            self.version = self.conn.info("server")["redis_version"]
            self.persistence = (f"save \"{' '.join(self.conn.config_get('save').values())}\", "
                                f"appendonly {self.conn.config_get('appendonly')['appendonly']}")
        except BaseException:
            self.stop()
            raise


# -- the variants ---------------------------------------------------------------

def run_sync(srv: Server, n: int) -> Result:
    lat = []
    with triage.Client(srv.sock, timeout=30, reconnect=0) as c:
        t0 = time.perf_counter()
        for _ in range(n):
            s = time.perf_counter()
            c.submit(["true"], env=triage.DAEMON_DEFAULT,
                     cwd=triage.DAEMON_DEFAULT)
            lat.append(time.perf_counter() - s)
        return Result(time.perf_counter() - t0, lat)


def run_async(srv: Server, n: int) -> Result:
    async def main() -> Result:
        lat: list[float] = []
        left = n
        async with triage.AsyncClient(srv.sock, timeout=30, reconnect=0) as c:
            async def worker() -> None:
                nonlocal left
                while left > 0:
                    left -= 1
                    s = time.perf_counter()
                    await c.submit(["true"], env=triage.DAEMON_DEFAULT,
                                   cwd=triage.DAEMON_DEFAULT)
                    lat.append(time.perf_counter() - s)
            t0 = time.perf_counter()
            await asyncio.gather(*(worker() for _ in range(WINDOW)))
            return Result(time.perf_counter() - t0, lat)
    return asyncio.run(main())


def run_raw(srv: Server, n: int) -> Result:
    """The floor: requests formatted by hand, WINDOW in flight on one
    socket, replies split on newlines and matched by the id that starts
    each (triaged writes "jsonrpc" then "id"), no JSON parsing."""
    lat = [0.0] * n
    sent_at = [0.0] * n
    params = json.dumps(SUBMIT, separators=(",", ":"))
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(srv.sock)
    buf = b""
    sent = done = 0
    t0 = time.perf_counter()
    with sock:
        while done < n:
            if sent < n and sent - done < WINDOW:
                batch = min(n - sent, WINDOW - (sent - done))
                now = time.perf_counter()
                out = []
                for i in range(sent, sent + batch):
                    sent_at[i] = now
                    out.append('{"jsonrpc":"2.0","id":%d,"method":"submit",'
                               '"params":%s}\n' % (i, params))
                sock.sendall("".join(out).encode())
                sent += batch
            chunk = sock.recv(1 << 20)
            if not chunk:
                raise RuntimeError("triaged closed the connection")
            now = time.perf_counter()
            buf += chunk
            lines = buf.split(b"\n")
            buf = lines.pop()
            for line in lines:
                # {"jsonrpc":"2.0","id":N,"result":...
                if b'"result"' not in line[:64]:
                    raise RuntimeError(f"submit failed: {line[:200]!r}")
                at = line.index(b'"id":') + 5
                i = int(line[at:line.index(b",", at)])
                lat[i] = now - sent_at[i]
                done += 1
    return Result(time.perf_counter() - t0, lat)


def run_rq(srv: Server, n: int) -> Result:
    from rq import Queue
    assert isinstance(srv, Redis)
    q = Queue("bench", connection=srv.conn)
    lat = []
    t0 = time.perf_counter()
    for _ in range(n):
        s = time.perf_counter()
        q.enqueue("os.getpid")
        lat.append(time.perf_counter() - s)
    seconds = time.perf_counter() - t0
    if len(q) != n:
        raise RuntimeError(f"rq holds {len(q)} jobs, not {n}")
    return Result(seconds, lat)


# -- measuring --------------------------------------------------------------------

def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(p / 100 * len(s)))]


def one_round(v: Variant, args: argparse.Namespace, info: dict[str, str]) -> None:
    srv: Server
    if v.name == "rq":
        srv = Redis(args.dir)
        info["redis"] = f"redis-server {srv.version} ({srv.persistence})"
    else:
        srv = Triaged(args.dir, args.triaged)
        info["triaged"] = f"triaged {srv.version}"
    try:
        r = v.run(srv, v.jobs)
        if isinstance(srv, Triaged) and srv.count_queued() != v.jobs:
            raise RuntimeError(f"triaged holds {srv.count_queued()} queued "
                               f"jobs, not {v.jobs}")
    finally:
        srv.stop()
    v.rates.append(v.jobs / r.seconds)
    v.lat.extend(r.lat)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help=f"{QUICK_JOBS} jobs ({QUICK_SERIAL_JOBS} one at a "
                    f"time), {QUICK_ROUNDS} rounds")
    ap.add_argument("--jobs", type=int, help=f"pipelined jobs a round ({JOBS})")
    ap.add_argument("--rounds", type=int)
    ap.add_argument("--bin", default=os.environ.get("BIN", str(REPO / "build" / "bin")),
                    help="where triaged is (build/bin)")
    ap.add_argument("--dir", default="/tmp", help="where the temp dirs go")
    ap.add_argument("--profile", help="cProfile the async variant into this file")
    args = ap.parse_args()
    args.triaged = os.path.join(args.bin, "triaged")
    jobs = args.jobs or (QUICK_JOBS if args.quick else JOBS)
    serial = min(jobs, QUICK_SERIAL_JOBS if args.quick else SERIAL_JOBS)
    rounds = args.rounds or (QUICK_ROUNDS if args.quick else ROUNDS)

    variants = [
        Variant("sync", "triage.Client.submit, one at a time", serial, run_sync),
        Variant("async", f"triage.AsyncClient.submit, {WINDOW} in flight", jobs, run_async),
        Variant("raw", f"raw JSON-RPC by hand, {WINDOW} in flight", jobs, run_raw),
        Variant("rq", "rq Queue.enqueue to redis-server, one at a time", serial, run_rq),
    ]
    if args.profile:
        import cProfile
        srv = Triaged(args.dir, args.triaged)
        try:
            cProfile.runctx("run_async(srv, jobs)", globals(),
                            {"srv": srv, "jobs": jobs, "run_async": run_async},
                            args.profile)
        finally:
            srv.stop()
        print(f"profile of the async variant in {args.profile}")
        return 0
    try:
        import rq  # noqa: F401
        if shutil.which("redis-server") is None:
            raise ImportError("no redis-server")
    except ImportError as exc:
        variants[3].error = f"not measured: {exc} (apt-get install python3-rq redis-server)"

    info: dict[str, str] = {}
    for r in range(rounds):
        for v in variants:
            if v.error is not None:
                continue  # failed in an earlier round, or cannot run here
            print(f"bench-python: round {r + 1}, {v.name}, {v.jobs} jobs...",
                  end="", file=sys.stderr, flush=True)
            try:
                one_round(v, args, info)
                print(f" {v.rates[-1]:.0f}/s", file=sys.stderr)
            except Exception as exc:  # noqa: BLE001 - reported, run goes on
                v.error = f"{type(exc).__name__}: {exc}"
                print(f" FAILED: {v.error}", file=sys.stderr)

    print(f"\npython benchmark: jobs enqueued per second from Python "
          f"(/usr/bin/python3 {sys.version.split()[0]}), median of {rounds} "
          f"rounds, and each enqueue's latency (all rounds)")
    print(f"{info.get('triaged', 'triaged')}, every priority paused, each "
          "submit {\"argv\": [\"true\"]}; "
          f"{info.get('redis', 'redis-server not measured')}")
    print("on a crash: triage has fsynced a job before it acknowledges the "
          "submit (SQLite WAL, group commit); Redis acknowledges an enqueue "
          "once in memory, and by default (RDB snapshots, appendonly no) a "
          "crash loses what came since the last snapshot")
    print(f"{'variant':<52} {'jobs':>6} {'jobs/s':>8} {'p50 ms':>8} "
          f"{'p99 ms':>8}")
    for v in variants:
        if v.rates:
            print(f"{v.what:<52} {v.jobs:>6} {statistics.median(v.rates):>8.0f} "
                  f"{pct(v.lat, 50) * 1e3:>8.3f} {pct(v.lat, 99) * 1e3:>8.3f}"
                  + (f"  FAILED later: {v.error}" if v.error else ""))
        else:
            print(f"{v.what:<52} {v.jobs:>6} {'-':>8} {'-':>8} {'-':>8}  "
                  f"{v.error}")

    def rate(v: Variant) -> float:
        return statistics.median(v.rates) if v.rates and not v.error else 0.0

    def desc(v: Variant) -> str:
        if not rate(v):
            return f"{v.name}: {v.error or 'not measured'}"
        return (f"{rate(v):.0f}/s (p50 {pct(v.lat, 50) * 1e3:.2f} ms, "
                f"p99 {pct(v.lat, 99) * 1e3:.2f} ms)")

    sync, aio, raw, rqv = variants
    ok = rate(aio) > 0 and rate(raw) > 0
    ratio = rate(raw) / rate(aio) if ok else float("inf")
    print()
    print(f"SUMMARY\tpython\tenqueue, async client, {WINDOW} in flight\t"
          f"{desc(aio)}\traw JSON-RPC {desc(raw)}, {ratio:.2f}x the async's\t"
          f"raw <= {TARGET}x async\t"
          f"{'met' if ok and ratio <= TARGET else 'MISSED'}")
    print(f"SUMMARY\tpython\tenqueue one at a time, sync client (fsynced)\t"
          f"{desc(sync)}\trq+redis (not fsynced) {desc(rqv)}"
          + (f", {rate(sync) / rate(rqv):.2f}x" if rate(sync) and rate(rqv) else "")
          + "\t-\t-")
    failed = any(v.error and not v.error.startswith("not measured")
                 for v in variants)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
