#!/usr/bin/env python3
"""An Appium session turned into Crease verdicts, end to end, with no phone: the
WebDriverAgent stand-in plays the device (a creased of its own), the real
Appium-Python-Client drives it, and the rig's creased judges what it shows.

    python3 appium_rig.py --socket /tmp/rig.sock --device-socket /tmp/phone.sock

Both sockets are creased daemons you started (``creased --socket …``); the first records
the rig's trace. The script folds the phone through every pose, turns it to landscape,
then reads a page source slowly while the phone unfolds (the capture is judged when it was
taken: no false mismatch), and last shows a control 30 points too low (a mismatch naming
it). With a real Appium server, replace the stand-in's URL with the server's and drop the
device socket: the rest is the same. Needs ``pip install ./clients/python[appium]``.
Exit 0 when every verdict was the one expected, 1 otherwise.
"""

from __future__ import annotations

import argparse
import sys

from appium import webdriver
from appium.options.ios import XCUITestOptions

import crease
from crease.appium import DuoRig
from crease.wda_standin import StandInWDA


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--socket", required=True, help="the rig's creased")
    parser.add_argument("--device-socket", required=True, help="the creased that plays the phone for the stand-in")
    args = parser.parse_args()
    failures = 0

    def expect(what: str, reply: crease.JSONObject, verdict: str) -> None:
        nonlocal failures
        ok = reply.get("verdict") == verdict
        failures += 0 if ok else 1
        paths = ", ".join(d["path"] for d in reply.get("differences", []))
        print(f"{what}: {reply.get('verdict')}" + (f" ({paths})" if paths else "") + ("" if ok else f"  <- expected {verdict}"))

    with crease.Client(args.socket) as rig_client, crease.Client(args.device_socket) as phone, StandInWDA(phone) as wda:
        driver = webdriver.Remote(command_executor=wda.url, options=XCUITestOptions())
        try:
            rig = DuoRig(driver, rig_client)
            print(f"clock offset to creased: {rig_client.clock_offset() / 1e6:.3f} ms")
            rig_client.mark("appium rig: fold through every pose")
            for angle in (0, 45, 90, 135, 180, 90, 0, 180):
                rig.fold(angle)
                expect(f"fold {angle:>3}°", rig.settle(), "match")
            rig.rotate("landscape")
            expect("landscape", rig.settle(), "match")
            rig.rotate("portrait")
            rig.fold(0)
            rig.settle()

            rig_client.mark("appium rig: a slow page source across an unfold")
            def unfold() -> None:
                phone.hinge(180)
                rig_client.hinge(180)
            wda.during_capture, wda.delay = unfold, 0.8
            expect("page source read closed, delivered 0.8 s later, open by then", rig.look(), "match")
            wda.during_capture, wda.delay = None, 0.0
            expect("and once delivered on time", rig.settle(), "match")

            rig_client.mark("appium rig: a control out of place")
            wda.misplace = {"search": 30}
            expect("search 30 pt low", rig.settle(), "mismatch")
        finally:
            driver.quit()
    print("all verdicts as expected" if failures == 0 else f"{failures} verdicts not as expected")
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
