"""The exceptions of the triage client: one class per error code of the
protocol (triage-protocol(7), ERRORS), and DaemonUnavailable for no socket."""

from __future__ import annotations

from typing import Any


class TriageError(Exception):
    """An error reply of the daemon: its JSON-RPC code, message and data.

    ``data`` is always a dict (the protocol says error.data is an object; a
    reply without one gets ``{}``), so ``err.data.get("field")`` is safe.
    """

    #: The error code this class stands for; None on the base class.
    CODE: int | None = None

    def __init__(self, code: int | None, message: str,
                 data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data: dict[str, Any] = data if isinstance(data, dict) else {}

    def __str__(self) -> str:
        if self.code is None:
            return self.message
        return f"{self.message} ({self.code})"

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self.code!r}, {self.message!r}, "
                f"{self.data!r})")


class ParseError(TriageError):
    """-32700: what was sent is not JSON, not UTF-8, or nested too deep."""
    CODE = -32700


class InvalidRequest(TriageError):
    """-32600: not a JSON-RPC 2.0 request object (or a line too long)."""
    CODE = -32600


class UnknownMethod(TriageError):
    """-32601: the daemon has no such method (an older daemon, perhaps)."""
    CODE = -32601


class InvalidParams(TriageError):
    """-32602: a param of the wrong type, out of bounds, missing or unknown.

    ``field`` names the param at fault (``priority``, ``argv[1]``,
    ``env.NAME``, ``resources.gpu``), or is None when the daemon named none.
    """
    CODE = -32602

    @property
    def field(self) -> str | None:
        value = self.data.get("field")
        return value if isinstance(value, str) else None


class InternalError(TriageError):
    """-32603: the daemon failed (it logs why); the request had no effect."""
    CODE = -32603


class NoSuchJob(TriageError):
    """-32001: no job has that id (never had, or it was removed)."""
    CODE = -32001


class PermissionDenied(TriageError):
    """-32002: not the job's owner nor an admin, or a method for admins."""
    CODE = -32002


class QueueFull(TriageError):
    """-32003: a bound of the config was reached.

    Mostly a priority's ``max_queued``, but the daemon uses the same code for
    every bound a request would pass (``max_queued_per_user``, ``max_waits``,
    ``max_watches``, ...); ``limit`` names the config key.
    """
    CODE = -32003

    @property
    def limit(self) -> str | None:
        value = self.data.get("limit")
        return value if isinstance(value, str) else None


class ShuttingDown(TriageError):
    """-32004: the daemon is stopping and takes no new submission or retry."""
    CODE = -32004


class WrongState(TriageError):
    """-32005: the job is in the wrong state for the operation (retry of a
    running job, update of one that is not queued, remove of a live one)."""
    CODE = -32005


class ConfigRejected(TriageError):
    """-32006: reload found the new config wrong; ``errors`` says why."""
    CODE = -32006

    @property
    def errors(self) -> list[str]:
        value = self.data.get("errors")
        return [str(e) for e in value] if isinstance(value, list) else []


class ProtocolError(TriageError):
    """The daemon said something this client cannot read (not JSON-RPC)."""


class DaemonUnavailable(TriageError, ConnectionError):
    """The daemon's socket cannot be reached, or the connection was lost.

    A ConnectionError too, so ``except ConnectionError`` catches it the way
    it catches any other failure to reach a server.
    """

    def __init__(self, message: str, path: str | None = None) -> None:
        TriageError.__init__(self, None, message, {})
        self.path = path


class _NotSent(DaemonUnavailable):
    """The connection was found lost before the request went out: the
    daemon never saw it, so sending it on a new connection is safe for
    every method (the clients do, once)."""


# Aliases under the names an HTTP-minded reader looks for first.
NotFound = NoSuchJob
Forbidden = PermissionDenied
LimitExceeded = QueueFull

_BY_CODE: dict[int, type[TriageError]] = {
    cls.CODE: cls
    for cls in (ParseError, InvalidRequest, UnknownMethod, InvalidParams,
                InternalError, NoSuchJob, PermissionDenied, QueueFull,
                ShuttingDown, WrongState, ConfigRejected)
    if cls.CODE is not None
}


def error_from_reply(error: Any) -> TriageError:
    """The exception for a reply's ``error`` member.

    A code this client does not know (a newer daemon's) still gives a
    TriageError carrying it, rather than failing to report the error.
    """
    if not isinstance(error, dict):
        return ProtocolError(None, f"malformed error member: {error!r}")
    code = error.get("code")
    message = error.get("message")
    if not isinstance(message, str):
        message = "error without a message"
    data = error.get("data")
    cls: type[TriageError] = (_BY_CODE.get(code, TriageError)
                               if isinstance(code, int) else TriageError)
    return cls(code if isinstance(code, int) else None, message,
               data if isinstance(data, dict) else None)
