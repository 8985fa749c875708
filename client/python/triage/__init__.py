"""triage: the Python client of the triaged job-dispatch daemon, speaking its
JSON-RPC protocol (triage-protocol(7)) over the daemon's Unix socket."""

from .aio import AsyncClient, AsyncWatch
from .client import DAEMON_DEFAULT, Client, Watch
from .errors import (ConfigRejected, DaemonUnavailable, Forbidden,
                     InternalError, InvalidParams, InvalidRequest,
                     LimitExceeded, NoSuchJob, NotFound, ParseError,
                     PermissionDenied, ProtocolError, QueueFull,
                     ShuttingDown, TriageError, UnknownMethod, WrongState)
from .job import TERMINAL_STATES, Event, Job

__version__ = "0.1.0"

__all__ = [
    "Client", "Watch", "AsyncClient", "AsyncWatch", "Job", "Event", "DAEMON_DEFAULT", "TERMINAL_STATES",
    "TriageError", "DaemonUnavailable", "ProtocolError", "ParseError",
    "InvalidRequest", "UnknownMethod", "InvalidParams", "InternalError",
    "NoSuchJob", "NotFound", "PermissionDenied", "Forbidden", "QueueFull",
    "LimitExceeded", "ShuttingDown", "WrongState", "ConfigRejected",
]
