"""Start and stop a real creased: for tests (the pytest plugin), benchmarks and examples."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import List, Optional, Sequence, Union

from .client import DEFAULT_TIMEOUT, Client, PathLike

#: How long a daemon may take to listen, or to exit after SIGTERM: generous, for a loaded machine.
START_TIMEOUT = 60.0
STOP_TIMEOUT = 30.0


class DaemonError(RuntimeError):
    """creased did not start, or did not stop cleanly."""


def find_binary(explicit: Optional[PathLike] = None) -> str:
    """The creased to run: ``explicit``, else ``$CREASE_BIN``, else ``creased`` on PATH."""
    candidate = os.fspath(explicit) if explicit else os.environ.get("CREASE_BIN") or shutil.which("creased")
    if not candidate:
        raise DaemonError("no creased binary: pass one (--creased-bin), set CREASE_BIN, or put creased on PATH")
    if not (os.path.isfile(candidate) and os.access(candidate, os.X_OK)):
        raise DaemonError(f"{candidate} is not an executable file")
    return candidate


def find_cli(explicit: Optional[PathLike] = None) -> str:
    """The ``crease`` command: ``explicit``, else beside ``$CREASE_BIN``, else on PATH."""
    if explicit:
        return os.fspath(explicit)
    beside = os.environ.get("CREASE_BIN")
    if beside:
        candidate = os.path.join(os.path.dirname(beside), "crease")
        if os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("crease")
    if not found:
        raise DaemonError("no crease command: put it on PATH or beside $CREASE_BIN")
    return found


class Daemon:
    """A creased process of our own, on a socket in a fresh temporary directory,
    recording traces into ``trace_dir`` (``trace``: a directory of the caller's, else
    ``workdir/traces``; ``trace=False``: none) and its log into
    ``log_path``. Use :meth:`start`; stop it with :meth:`stop` (or as a context manager)."""

    def __init__(self, binary: str, workdir: Path, args: Sequence[str], trace: Union[bool, PathLike]) -> None:
        self.binary = binary
        self.workdir = workdir
        # Unix socket paths are short (108 bytes): the socket gets a directory of its own under /tmp.
        self._socket_dir = tempfile.mkdtemp(prefix="crease-")
        self.socket_path = os.path.join(self._socket_dir, "creased.sock")
        self.trace_dir: Optional[Path] = (None if trace is False else workdir / "traces" if trace is True
                                          else Path(os.fspath(trace)))
        self.log_path = workdir / "creased.log"
        self.args: List[str] = [binary, "--socket", self.socket_path, "--log-level", "info"]
        if self.trace_dir is not None:
            self.args += ["--trace-dir", str(self.trace_dir)]
        else:
            self.args.append("--no-trace")
        self.args += list(args)
        self.returncode: Optional[int] = None
        self._log = open(self.log_path, "wb")
        self.process = subprocess.Popen(self.args, stdin=subprocess.DEVNULL, stdout=self._log,
                                        stderr=subprocess.STDOUT)

    @classmethod
    def start(cls, binary: Optional[PathLike] = None, workdir: Optional[PathLike] = None,
              args: Sequence[str] = (), trace: Union[bool, PathLike] = True, timeout: float = START_TIMEOUT) -> "Daemon":
        """Starts creased and returns once its socket accepts connections."""
        work = Path(workdir) if workdir is not None else Path(tempfile.mkdtemp(prefix="creased-run-"))
        work.mkdir(parents=True, exist_ok=True)
        daemon = cls(find_binary(binary), work, args, trace)
        try:
            daemon._wait_until_listening(timeout)
        except BaseException:
            daemon.stop(check=False)
            raise
        return daemon

    def _wait_until_listening(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                raise DaemonError(f"creased exited with status {self.process.returncode} before listening:\n{self.log_tail()}")
            if os.path.exists(self.socket_path):  # creased links the path into place once it listens
                probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                try:
                    probe.connect(self.socket_path)
                    return
                except OSError:
                    pass
                finally:
                    probe.close()
            if time.monotonic() > deadline:
                raise DaemonError(f"creased did not listen on {self.socket_path} within {timeout} s:\n{self.log_tail()}")
            time.sleep(0.01)

    def connect(self, timeout: Optional[float] = DEFAULT_TIMEOUT) -> Client:
        """A new client connection to this daemon."""
        return Client(self.socket_path, timeout=timeout)

    def trace_files(self) -> List[Path]:
        """The trace files written so far, oldest first."""
        if self.trace_dir is None or not self.trace_dir.is_dir():
            return []
        return sorted(self.trace_dir.glob("*.jsonl"), key=lambda p: (p.stat().st_mtime_ns, p.name))

    def log_text(self) -> str:
        if not self._log.closed:
            self._log.flush()
        return self.log_path.read_text(errors="replace")

    def log_tail(self, lines: int = 20) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:])

    @property
    def running(self) -> bool:
        return self.process.poll() is None

    def stop(self, check: bool = True, timeout: float = STOP_TIMEOUT) -> int:
        """Sends SIGTERM, waits for the exit and returns its status. With ``check``,
        raises DaemonError unless it exited 0 within ``timeout`` seconds. Stopping twice
        returns the first status."""
        if self.returncode is None:
            if self.process.poll() is None:
                self.process.send_signal(signal.SIGTERM)
                try:
                    self.process.wait(timeout)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait()
                    self.returncode = self.process.returncode
                    self._cleanup()
                    if check:
                        raise DaemonError(f"creased did not exit within {timeout} s of SIGTERM; killed it:\n{self.log_tail()}")
                    return self.returncode
            self.returncode = self.process.returncode
            self._cleanup()
        if check and self.returncode != 0:
            raise DaemonError(f"creased exited with status {self.returncode}:\n{self.log_tail()}")
        return self.returncode

    def _cleanup(self) -> None:
        self._log.close()
        shutil.rmtree(self._socket_dir, ignore_errors=True)

    def describe(self) -> str:
        """Where to look after a failure: the trace files, the log and its last lines."""
        traces = self.trace_files()
        lines = [f"creased: {' '.join(self.args)}",
                 f"trace: {', '.join(str(p) for p in traces) if traces else '(none written)'}",
                 f"log: {self.log_path}"]
        tail = self.log_tail()
        if tail:
            lines.append(tail)
        return "\n".join(lines)

    def __enter__(self) -> "Daemon":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop(check=False)
