"""labgrid support (``pip install ./clients/python[labgrid]``): a ``CreaseDaemon`` resource
and a ``CreaseDriver`` bound to it, registered with labgrid's target factory so an
environment file names them (docs/frameworks.md)::

    imports:
      - crease.labgrid
    targets:
      main:
        resources:
          CreaseDaemon:
            socket: /run/crease/rig-3.sock
            labels: {rig: rig-3}
        drivers:
          CreaseDriver: {}

The driver gives a test the client's calls. Where the daemon is local and not running, it
starts one on the resource's socket (with its labels, ``trace_dir`` and ``args``) and
stops it when deactivated. The resource holds only plain parameters, so a labgrid
exporter exports it like any resource; the socket path is the exporter host's.
"""

# labgrid ships no type information: its decorators and base classes are Any here.
# mypy: disallow-untyped-decorators=False
from __future__ import annotations

import os
import socket
import subprocess
import time
from typing import Any, Dict, List, Optional

import attr
from labgrid.driver import Driver  # type: ignore[import-untyped]
from labgrid.factory import target_factory  # type: ignore[import-untyped]
from labgrid.resource import Resource  # type: ignore[import-untyped]
from labgrid.step import step  # type: ignore[import-untyped]

from .client import Client, JSONObject, Subscription
from .daemon import find_binary
from .rig import Rig, RunResult, read_tour
from .rigfile import load_rig_file

__all__ = ["CreaseDaemon", "CreaseDriver", "AppiumRig", "CreaseRigDriver"]


def _listening(path: str) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(path)
        return True
    except OSError:
        return False
    finally:
        probe.close()


@target_factory.reg_resource
@attr.s(eq=False)
class CreaseDaemon(Resource):  # type: ignore[misc]
    """A creased on a rig: its socket and the rig's labels (``--label KEY=VALUE``). For a
    daemon the driver may start: ``binary`` (default: $CREASE_BIN, else creased on PATH),
    ``trace_dir`` and further ``args``."""

    socket: str = attr.ib(validator=attr.validators.instance_of(str))
    labels: Dict[str, str] = attr.ib(factory=dict, validator=attr.validators.instance_of(dict))
    binary: Optional[str] = attr.ib(default=None, validator=attr.validators.optional(attr.validators.instance_of(str)))
    trace_dir: Optional[str] = attr.ib(default=None, validator=attr.validators.optional(attr.validators.instance_of(str)))
    args: List[str] = attr.ib(factory=list, validator=attr.validators.instance_of(list))


@target_factory.reg_driver
@attr.s(eq=False)
class CreaseDriver(Driver):  # type: ignore[misc]
    """The client's calls on the bound ``CreaseDaemon``; ``timeout`` bounds each reply and
    the wait for a daemon it starts."""

    bindings = {"daemon": "CreaseDaemon"}
    timeout: float = attr.ib(default=30.0, converter=float)

    def __attrs_post_init__(self) -> None:
        super().__attrs_post_init__()
        self.client: Optional[Client] = None
        self.started: Optional[subprocess.Popen[bytes]] = None

    def on_activate(self) -> None:
        path = self.daemon.socket
        if not _listening(path):
            self.started = self._start(path)
        self.client = Client(path, timeout=self.timeout)

    def on_deactivate(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None
        if self.started is not None:
            self.started.terminate()
            try:
                self.started.wait(timeout=self.timeout)
            except subprocess.TimeoutExpired:
                self.started.kill()
                self.started.wait()
            self.started = None

    def _start(self, path: str) -> subprocess.Popen[bytes]:
        command: List[str] = [find_binary(self.daemon.binary), "--socket", path]
        for key, value in sorted(self.daemon.labels.items()):
            command += ["--label", f"{key}={value}"]
        if self.daemon.trace_dir is not None:
            command += ["--trace-dir", self.daemon.trace_dir]
        command += [str(a) for a in self.daemon.args]
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        self.logger.info("starting %s", " ".join(command))
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + self.timeout
        while not _listening(path):
            if process.poll() is not None:
                raise RuntimeError(f"creased exited with status {process.returncode} before listening on {path}")
            if time.monotonic() > deadline:
                process.kill()
                raise TimeoutError(f"creased did not listen on {path} within {self.timeout} s")
            time.sleep(0.01)
        return process

    def _client(self) -> Client:
        assert self.client is not None, "the driver is not active"
        return self.client

    @Driver.check_active
    @step(args=["message"])
    def send(self, message: Dict[str, Any]) -> JSONObject:
        """An event or a command, and its reply (``CreaseError`` when refused)."""
        return self._client().send(message)

    @Driver.check_active
    def layout(self) -> JSONObject:
        return self._client().layout()

    @Driver.check_active
    @step(args=["observed"])
    def observe(self, observed: Dict[str, Any], **options: Any) -> JSONObject:
        return self._client().observe(observed, **options)

    @Driver.check_active
    def subscribe(self, *topics: str) -> Subscription:
        return self._client().subscribe(*topics)

    @Driver.check_active
    @step(args=["label"])
    def mark(self, label: str) -> JSONObject:
        return self._client().mark(label)

    @Driver.check_active
    def stats(self) -> JSONObject:
        return self._client().stats()

    @Driver.check_active
    def hello(self) -> JSONObject:
        return self._client().hello()


@target_factory.reg_resource
@attr.s(eq=False)
class AppiumRig(Resource):  # type: ignore[misc]
    """A phone on a rig: its Appium (or WebDriverAgent) URL and the rig file (RIG.json)."""

    url: str = attr.ib(validator=attr.validators.instance_of(str))
    rig_file: str = attr.ib(validator=attr.validators.instance_of(str))


@target_factory.reg_driver
@attr.s(eq=False)
class CreaseRigDriver(Driver):  # type: ignore[misc]
    """A :class:`crease.rig.Rig` over the bound ``AppiumRig`` and ``CreaseDriver``: any
    Crease event done to the phone (``perform``), ``reset``, and ``run_tour`` (a tour from
    ``crease plan --tour -o``, checkpointed when given a path). Needs Appium-Python-Client;
    a motor rig passes its motor with ``fold`` after activation."""

    bindings = {"crease": "CreaseDriver", "phone": "AppiumRig"}

    def __attrs_post_init__(self) -> None:
        super().__attrs_post_init__()
        self.rig: Optional[Rig] = None
        self._driver: Any = None

    def on_activate(self) -> None:
        from appium import webdriver
        from appium.options.ios import XCUITestOptions
        self._driver = webdriver.Remote(command_executor=self.phone.url, options=XCUITestOptions())
        self.rig = Rig(self._driver, self.crease._client(), load_rig_file(self.phone.rig_file))

    def on_deactivate(self) -> None:
        if self._driver is not None:
            self._driver.quit()
        self._driver = None
        self.rig = None

    def _rig(self) -> Rig:
        assert self.rig is not None, "the driver is not active"
        return self.rig

    @Driver.check_active
    @step(args=["event"])
    def perform(self, event: Dict[str, Any]) -> JSONObject:
        return self._rig().perform(event)

    @Driver.check_active
    @step()
    def reset(self) -> JSONObject:
        return self._rig().reset()

    @Driver.check_active
    @step(args=["tour"])
    def run_tour(self, tour: str, checkpoint: Optional[str] = None, resume: bool = False) -> RunResult:
        return self._rig().run(read_tour(tour), checkpoint=checkpoint, resume=resume,
                               progress=lambda line: self.logger.info("%s", line))

