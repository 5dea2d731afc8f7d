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
"""

from __future__ import annotations

from typing import Any, Generator, Iterator, List

import pytest

from .client import Client
from .daemon import Daemon, DaemonError, find_binary

_daemons = pytest.StashKey[List[Daemon]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("crease")
    group.addoption("--creased-bin", default=None, metavar="PATH",
                    help="the creased binary the creased fixture starts (default: $CREASE_BIN, else creased on PATH)")


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
