"""pytest plugin (entry point ``pytest11``): fixtures that start a real creased per test.

- ``creased``: a connected :class:`crease.Client` to a fresh daemon.
- ``creased_daemon``: that daemon (:class:`crease.Daemon`: ``socket_path``,
  ``trace_dir``, ``trace_files()``, ``connect()``, ``stop()``) for tests that need
  more than one connection or stop it themselves.

The binary: ``--creased-bin PATH``, else ``$CREASE_BIN``, else ``creased`` on PATH.
``@pytest.mark.creased_args("--app", "builtin:split")`` passes options to it. At the
end of the test the daemon gets SIGTERM and must exit 0. When a test fails, its report
gets a ``creased`` section (the command line, the trace files, the log's last lines)
and the ``creased_trace`` user property (for JUnit XML).

``--crease-corpus DIR`` (repeatable) adds one test item per trace under DIR (``*.jsonl``,
recursively, in a stable order), named by its path relative to DIR: it runs ``crease
replay --verify`` on the trace (the ``crease`` beside the creased binary, else on PATH)
and fails with the divergence report. ``pytest -n auto`` (pytest-xdist) spreads them; the
JUnit report lists each trace.

``--crease-glitches BASELINE`` also checks each corpus trace with ``crease trace glitches``:
a glitch fails the item unless a line of BASELINE (JSON Lines) accepts it. A line is
``{"kind": K}``, optionally with ``"subject"`` and ``"trace"`` (the item's name); an empty
file accepts nothing. A failure lists the new glitches and the baseline lines that would
accept them, so a reviewer copies what is intended into the baseline. Stale looks (kind
``stale``: the device still catching up with a layout changed within the settle window)
never fail an item unless ``--crease-stale-fails`` is given.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Generator, Iterator, List, Optional, Tuple

import pytest

from .client import Client
from .daemon import Daemon, DaemonError, find_binary

_daemons = pytest.StashKey[List[Daemon]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("crease")
    group.addoption("--creased-bin", default=None, metavar="PATH",
                    help="the creased binary the creased fixture starts (default: $CREASE_BIN, else creased on PATH)")
    group.addoption("--crease-corpus", action="append", default=[], metavar="DIR",
                    help="verify every trace under DIR, one test item each (repeatable)")
    group.addoption("--crease-glitches", default=None, metavar="BASELINE",
                    help="also check each corpus trace for glitches; BASELINE (JSON Lines) lists the accepted ones")
    group.addoption("--crease-stale-fails", action="store_true", default=False,
                    help="with --crease-glitches, stale looks (the device catching up) fail an item too")


@dataclass(frozen=True)
class AcceptedGlitch:
    """A line of a glitch baseline: a kind, and optionally a subject and a trace (item name)."""

    kind: str
    subject: Optional[str] = None
    trace: Optional[str] = None

    def accepts(self, trace: str, glitch: Dict[str, Any]) -> bool:
        return (glitch.get("kind") == self.kind and (self.subject is None or glitch.get("subject") == self.subject)
                and (self.trace is None or self.trace == trace))


_BASELINE_LIMIT = 16 * 1024 * 1024


def read_baseline(path: str) -> List[AcceptedGlitch]:
    """The accepted glitches of a baseline file; a pytest.UsageError names the bad line."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as e:
        raise pytest.UsageError(f"--crease-glitches {path}: {e.strerror}")
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise pytest.UsageError(f"--crease-glitches {path}: not a regular file")
        if info.st_size > _BASELINE_LIMIT:
            raise pytest.UsageError(f"--crease-glitches {path}: larger than {_BASELINE_LIMIT} bytes")
        data = f.read(_BASELINE_LIMIT + 1)
    accepted: List[AcceptedGlitch] = []
    for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError as e:
            raise pytest.UsageError(f"--crease-glitches {path}:{number}: not JSON: {e}")
        if not isinstance(entry, dict) or not isinstance(entry.get("kind"), str):
            raise pytest.UsageError(f"--crease-glitches {path}:{number}: each line is an object with a \"kind\"")
        unknown = set(entry) - {"kind", "subject", "trace"}
        if unknown:
            raise pytest.UsageError(f"--crease-glitches {path}:{number}: unknown member {sorted(unknown)[0]!r} (kind, subject, trace)")
        for key in ("subject", "trace"):
            if key in entry and not isinstance(entry[key], str):
                raise pytest.UsageError(f"--crease-glitches {path}:{number}: {key} is a string")
        accepted.append(AcceptedGlitch(entry["kind"], entry.get("subject"), entry.get("trace")))
    return accepted


class CorpusDivergence(Exception):
    """A corpus trace that does not verify: the report of `crease replay --verify`."""


class CorpusTrace(pytest.Item):
    """One trace of a ``--crease-corpus`` directory, verified by ``crease replay --verify``."""

    def __init__(self, *, trace: Path, crease: Optional[str], baseline: Optional[List[AcceptedGlitch]],
                 stale_fails: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.trace = trace
        self.crease = crease
        self.baseline = baseline
        self.stale_fails = stale_fails
        # No fixtures: said for plugins that read it of every item (labgrid's does).
        self.fixturenames: List[str] = []

    def runtest(self) -> None:
        if self.crease is None:
            raise CorpusDivergence("no crease command: put it beside the creased binary (--creased-bin, $CREASE_BIN) or on PATH")
        run = subprocess.run([self.crease, "replay", "--verify", str(self.trace)], capture_output=True, text=True, timeout=3600)
        if run.returncode != 0:
            raise CorpusDivergence((run.stdout + run.stderr).strip())
        self.user_properties.append(("verified", run.stderr.strip()))
        if self.baseline is not None:
            self._check_glitches(self.crease, self.baseline)

    def _check_glitches(self, crease: str, baseline: List[AcceptedGlitch]) -> None:
        run = subprocess.run([crease, "trace", "glitches", str(self.trace), "--json"], capture_output=True, text=True, timeout=3600)
        if run.returncode not in (0, 1):
            raise CorpusDivergence(f"crease trace glitches: {run.stderr.strip()}")
        found = [json.loads(line) for line in run.stdout.splitlines() if line.strip()]
        failing = [g for g in found if self.stale_fails or g.get("kind") != "stale"]
        new = [g for g in failing if not any(a.accepts(self.name, g) for a in baseline)]
        if new:
            lines = [f"{len(new)} glitch{'es' if len(new) > 1 else ''} not in the baseline:"]
            lines += [f"  {g['kind']:<11} {g['subject']:<18} seq {g['seq'][0]}…{g['seq'][1]}  {g['message']}" for g in new]
            lines.append("baseline lines that would accept them:")
            accept = sorted({json.dumps({"kind": g["kind"], "subject": g["subject"], "trace": self.name}) for g in new})
            lines += [f"  {line}" for line in accept]
            raise CorpusDivergence("\n".join(lines))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, CorpusDivergence):
            return f"{self.trace}:\n{excinfo.value}"
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> Tuple[Path, Optional[int], str]:
        return self.trace, None, f"trace {self.name}"


def _crease_command(config: pytest.Config) -> Optional[str]:
    try:
        beside = os.path.join(os.path.dirname(find_binary(config.getoption("--creased-bin"))), "crease")
        if os.access(beside, os.X_OK):
            return beside
    except DaemonError:
        pass
    return shutil.which("crease")


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: List[pytest.Item]) -> None:
    corpora = config.getoption("--crease-corpus") or []
    if not corpora:
        return
    crease = _crease_command(config)
    baseline_path = config.getoption("--crease-glitches")
    baseline = read_baseline(baseline_path) if baseline_path is not None else None
    for corpus in corpora:
        root = Path(corpus)
        if not root.is_dir():
            raise pytest.UsageError(f"--crease-corpus {corpus}: not a directory")
        for trace in sorted(p for p in root.rglob("*.jsonl") if p.is_file() and not p.is_symlink()):
            name = trace.relative_to(root).as_posix()
            items.append(CorpusTrace.from_parent(session, name=name, trace=trace, crease=crease, baseline=baseline,
                                                 stale_fails=bool(config.getoption("--crease-stale-fails"))))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "creased_args(*args): options for the creased the creased fixture starts")


@pytest.fixture
def creased_daemon(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    """A creased of this test's own, listening; stopped with SIGTERM (and checked to exit 0) afterwards."""
    try:
        binary = find_binary(request.config.getoption("--creased-bin"))
    except DaemonError as e:
        pytest.fail(str(e), pytrace=False)
    args: List[str] = []
    for marker in reversed(list(request.node.iter_markers("creased_args"))):
        args += [str(a) for a in marker.args]
    daemon = Daemon.start(binary, workdir=tmp_path_factory.mktemp("creased"), args=args)
    request.node.stash.setdefault(_daemons, []).append(daemon)
    try:
        yield daemon
    finally:
        try:
            daemon.stop()
        except DaemonError as e:
            pytest.fail(str(e), pytrace=False)


@pytest.fixture
def creased(creased_daemon: Daemon) -> Iterator[Client]:
    """A client connected to this test's creased."""
    with creased_daemon.connect() as client:
        yield client


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    outcome = yield
    report = outcome.get_result()
    daemons = item.stash.get(_daemons, [])
    if report.failed and daemons:
        for daemon in daemons:
            report.sections.append(("creased", daemon.describe()))
            traces = daemon.trace_files()
            trace = ("creased_trace", str(traces[-1]) if traces else str(daemon.trace_dir))
            # JUnit XML takes the properties of the item (they reach the teardown report).
            if trace not in item.user_properties:
                item.user_properties.append(trace)
