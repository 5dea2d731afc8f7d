"""The stand-in phone the rig tests drive: the phone's own creased behind a WebDriverAgent
stand-in, the rig's creased beside it, and a real Appium driver on the phone."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from appium import webdriver
from appium.options.ios import XCUITestOptions

from crease import Client, Daemon
from crease.wda_standin import StandInWDA


@dataclass
class StandInPhone:
    driver: Any
    #: The rig's creased, and its daemon (for its traces).
    client: Client
    rig_daemon: Daemon
    wda: StandInWDA
    #: The phone's own creased, which plays the device.
    device: Client


@contextmanager
def standin_phone(creased_bin: str, tmp_path: Path, app: str, name: str = "") -> Iterator[StandInPhone]:
    """Both daemons in ``tmp_path`` (``phone``/``rig``, or ``phone-NAME``/``rig-NAME``), stopped on the way out."""
    suffix = f"-{name}" if name else ""
    phone = Daemon.start(creased_bin, workdir=tmp_path / f"phone{suffix}", args=["--app", app], trace=False)
    rig_daemon = Daemon.start(creased_bin, workdir=tmp_path / f"rig{suffix}", args=["--app", app])
    try:
        with phone.connect() as device, rig_daemon.connect() as client, StandInWDA(device) as wda:
            driver = webdriver.Remote(command_executor=wda.url, options=XCUITestOptions())
            try:
                yield StandInPhone(driver, client, rig_daemon, wda, device)
            finally:
                driver.quit()
    finally:
        rig_daemon.stop()
        phone.stop()
