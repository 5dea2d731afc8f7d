"""Drive creased, the Crease layout daemon, from Python.

    import crease
    with crease.Client() as rig:
        rig.send({"event": "hinge", "angle": 90})
        print(rig.layout()["barAxis"])
"""

from .client import (DEFAULT_TIMEOUT, DEFAULT_WINDOW, Client, ConnectionClosed, CreaseError, DaemonRestarted, JSONObject,
                     SendInterrupted, Subscription, default_socket_path, read_trace_header, trace_monotonic_origin)
from .daemon import Daemon, DaemonError
from .rigfile import RigFile, RigFileError, load_rig_file

__all__ = ["Client", "Subscription", "CreaseError", "ConnectionClosed", "DaemonRestarted", "SendInterrupted", "Daemon", "DaemonError",
           "default_socket_path", "read_trace_header", "trace_monotonic_origin", "DEFAULT_TIMEOUT", "DEFAULT_WINDOW", "JSONObject",
           "RigFile", "RigFileError", "load_rig_file"]
__version__ = "0.1.0"
