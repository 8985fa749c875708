"""The wire level of the triage protocol: finding the socket, connecting, and
newline-delimited JSON framing, plus the {"base64": ...} form of byte strings."""

from __future__ import annotations

import base64
import binascii
import json
import os
import select
import socket
import time
from typing import Any

from .errors import DaemonUnavailable, ProtocolError

#: The system daemon's socket: TRIAGE_SOCKET_SYSTEM of <triage/client.h>.
SYSTEM_SOCKET = "/run/triage/triage.sock"

# What one recv() asks for; lines longer than this are simply read in pieces.
_CHUNK = 65536


def socket_path(flag: str | os.PathLike[str] | None = None) -> str:
    """The socket path, in the order of lib/client-socket.c (the CLI's).

    The argument, else ``$TRIAGE_SOCKET`` when set and not empty, else, for a
    user other than root whose ``$XDG_RUNTIME_DIR`` is an absolute path to a
    directory holding ``triage/`` (the user runs a daemon of their own),
    ``$XDG_RUNTIME_DIR/triage/triage.sock``, else the system daemon's.
    """
    if flag is not None:
        return os.fspath(flag)
    env = os.environ.get("TRIAGE_SOCKET")
    if env:
        return env
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    # A relative XDG_RUNTIME_DIR is ignored, as the XDG spec says; and a
    # client goes there only if the user's own daemon made triage/ in it,
    # since every login has a runtime directory whether it runs one or not.
    if os.geteuid() != 0 and xdg and xdg.startswith("/") and os.path.isdir(xdg):
        sub = xdg.rstrip("/") + "/triage"
        if os.path.isdir(sub):
            return sub + "/triage.sock"
    return SYSTEM_SOCKET


def encode_bytes(value: str | bytes) -> str | dict[str, str]:
    """A byte string as the protocol sends it (triage-protocol(7), NON-UTF-8
    BYTES): a plain string when the bytes are UTF-8, else {"base64": ...}.

    A str is taken as the OS gives it (os.fsencode), so a surrogate-escaped
    file name or argument travels as the bytes it stands for.
    """
    raw = os.fsencode(value) if isinstance(value, str) else bytes(value)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(raw).decode("ascii")}


def decode_bytes(value: Any) -> Any:
    """A byte string as the daemon sends it: a str, or bytes for a
    {"base64": ...} object (bytes that are not UTF-8 have no str); any
    other value (None for a member left out) as it is."""
    if isinstance(value, dict) and isinstance(value.get("base64"), str):
        try:
            return base64.b64decode(value["base64"], validate=True)
        except (binascii.Error, ValueError) as exc:
            raise ProtocolError(None, f"bad base64 from the daemon: {exc}")
    return value


def caller_env() -> dict[str, str | dict[str, str]]:
    """This process's environment, encoded as the CLI sends it by default
    (client/cmd-submit.c): each value a byte string; a variable whose name is
    not UTF-8 is left out, since a JSON key must be UTF-8."""
    env: dict[str, str | dict[str, str]] = {}
    for key, value in os.environb.items():
        try:
            name = key.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if name and "=" not in name:
            env[name] = encode_bytes(value)
    return env


def caller_cwd() -> str | dict[str, str]:
    """This process's working directory, encoded as the CLI sends it."""
    return encode_bytes(os.getcwdb())


def decode_line(line: bytes) -> Any:
    """One message of the daemon's, a line without its newline (a CR
    before it, or blanks around it, are JSON's whitespace), decoded;
    ProtocolError when it is not JSON."""
    try:
        return json.loads(line)
    except ValueError as exc:
        raise ProtocolError(None, f"the daemon sent a line that is not "
                            f"JSON: {exc}") from exc


class Connection:
    """One stream connection to the daemon, sending and reading whole lines.

    Not thread-safe by itself: the Client serialises sends and lets one
    thread read at a time. Bytes read past a line stay buffered, so a read
    that times out loses nothing: the next read goes on where it stopped.
    """

    def __init__(self, path: str, timeout: float | None = None) -> None:
        self.path = path
        self._buf = bytearray()
        # Where the scan for a newline resumes: bytes before it hold none.
        self._scanned = 0
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(timeout)
            sock.connect(path)
        except OSError as exc:
            sock.close()
            raise DaemonUnavailable(_connect_message(path, exc), path) from exc
        # Blocking from here on: reads wait in select() with their own
        # deadline, and sends of one request line go whole.
        sock.settimeout(None)
        self._sock: socket.socket | None = sock

    def close(self) -> None:
        """Closes the socket; further use raises DaemonUnavailable."""
        sock, self._sock = self._sock, None
        if sock is not None:
            sock.close()

    @property
    def closed(self) -> bool:
        return self._sock is None

    def fileno(self) -> int:
        return self._require().fileno()

    def send(self, message: Any) -> None:
        """Sends one message as one line. ``ensure_ascii`` keeps it safe from
        any raw newline or invalid UTF-8 a str could otherwise carry."""
        line = json.dumps(message, ensure_ascii=True,
                          separators=(",", ":")).encode("ascii") + b"\n"
        try:
            self._require().sendall(line)
        except OSError as exc:
            self.close()
            raise DaemonUnavailable(f"lost the daemon at {self.path}: {exc}",
                                    self.path) from exc

    def read(self, deadline: float | None = None) -> Any:
        """The next message, decoded; TimeoutError past ``deadline`` (a
        time.monotonic() value, None for none). Blank lines are skipped."""
        while True:
            line = self._next_line(deadline)
            if line.strip():
                return decode_line(line)

    def _next_line(self, deadline: float | None) -> bytes:
        sock = self._require()
        while True:
            nl = self._buf.find(b"\n", self._scanned)
            if nl != -1:
                line = bytes(self._buf[:nl])
                del self._buf[:nl + 1]
                self._scanned = 0
                return line
            self._scanned = len(self._buf)
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([sock], [], [], left)[0]:
                    raise TimeoutError("no reply from the daemon in time")
            try:
                chunk = sock.recv(_CHUNK)
            except OSError as exc:
                self.close()
                raise DaemonUnavailable(f"lost the daemon at {self.path}: "
                                        f"{exc}", self.path) from exc
            if not chunk:
                self.close()
                raise DaemonUnavailable(f"the daemon at {self.path} closed "
                                        "the connection", self.path)
            self._buf += chunk

    def _require(self) -> socket.socket:
        if self._sock is None:
            raise DaemonUnavailable(f"not connected to {self.path}", self.path)
        return self._sock


def _connect_message(path: str, exc: OSError) -> str:
    # The same hints as lib/client.c gives: the usual two causes.
    if isinstance(exc, PermissionError):
        hint = "are you in the socket's group?"
    else:
        hint = "is triaged running?"
    return f"cannot connect to {path}: {exc.strerror or exc} ({hint})"
