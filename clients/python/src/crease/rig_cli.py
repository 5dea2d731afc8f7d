"""``crease-rig``: a night's tour on a phone for labs that do not write Python (docs/rig.md).

    crease-rig run TOUR --rig RIG.json --appium URL [--socket PATH] [--checkpoint PATH] [--resume] [--stop-on-mismatch]
    crease-rig standin [--app FILE|builtin:NAME] [--port N] [--fault KIND:ARGS]...

``run`` exits 0 when every class the tour looks at matched, 1 when some mismatched, 2 on
bad input or a device it cannot drive. ``standin`` starts the stand-in device (a creased of
its own plays the phone) and prints its WebDriver URL as the first line of stdout, then
serves until SIGINT or SIGTERM. Faults: ``misplace:ITEM:DY`` (that control drawn DY points
lower), ``lag:MS`` (each page source MS late), ``short:DEGREES`` (the hinge lands that much
short).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import tempfile
import threading
from typing import Dict, Optional, Sequence

from .client import Client, CreaseError
from .daemon import Daemon, DaemonError, find_binary
from .rig import Rig, RigError, read_tour
from .rigfile import RigFileError, load_rig_file

__all__ = ["main"]


def _run(args: argparse.Namespace) -> int:
    try:
        from appium import webdriver
        from appium.options.ios import XCUITestOptions
    except ImportError:
        print("crease-rig: run needs Appium-Python-Client (pip install 'crease[appium]')", file=sys.stderr)
        return 2
    try:
        rig_file = load_rig_file(args.rig)
        steps = read_tour(args.tour)
    except (OSError, ValueError, RigFileError, RigError) as e:
        print(f"crease-rig: {e}", file=sys.stderr)
        return 2
    try:
        client = Client(args.socket)
    except (OSError, CreaseError) as e:
        print(f"crease-rig: cannot reach creased: {e}", file=sys.stderr)
        return 2
    try:
        driver = webdriver.Remote(command_executor=args.appium, options=XCUITestOptions())
    except Exception as e:  # the driver's own errors: the device cannot be driven
        print(f"crease-rig: cannot start an Appium session at {args.appium}: {e}", file=sys.stderr)
        client.close()
        return 2
    rig = Rig(driver, client, rig_file)
    try:
        result = rig.run(steps, checkpoint=args.checkpoint, resume=args.resume, stop_on_mismatch=args.stop_on_mismatch,
                         progress=None if args.quiet else (lambda line: print(line, file=sys.stderr)))
    except RigError as e:
        print(f"crease-rig: {e}", file=sys.stderr)
        return 2
    finally:
        driver.quit()
        client.close()
    summary = {"matched": len(result.matched), "mismatched": sorted(result.mismatched), "steps": result.steps,
               "measuredCosts": rig.measured_costs()}
    print(json.dumps(summary))
    return 1 if result.mismatched else 0


def _standin(args: argparse.Namespace) -> int:
    from .wda_standin import StandInWDA
    misplace: Dict[str, float] = {}
    lag = 0.0
    short = 0.0
    for fault in args.fault:
        kind, _, rest = fault.partition(":")
        try:
            if kind == "misplace":
                item, _, dy = rest.rpartition(":")
                if not item:
                    raise ValueError("misplace:ITEM:DY")
                misplace[item] = float(dy)
            elif kind == "lag":
                lag = float(rest) / 1000
            elif kind == "short":
                short = float(rest)
            else:
                print(f"crease-rig: no fault {kind!r}; faults: misplace:ITEM:DY, lag:MS, short:DEGREES", file=sys.stderr)
                return 2
        except ValueError:
            print(f"crease-rig: --fault {fault!r}: expected misplace:ITEM:DY, lag:MS or short:DEGREES with numbers", file=sys.stderr)
            return 2
    try:
        phone = Daemon.start(find_binary(args.creased), workdir=tempfile.mkdtemp(prefix="crease-standin-"),
                             args=["--app", args.app], trace=False)
    except DaemonError as e:
        print(f"crease-rig: {e}", file=sys.stderr)
        return 2
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    try:
        with phone.connect() as device, StandInWDA(device, port=args.port) as wda:
            wda.misplace.update(misplace)
            wda.delay = lag
            wda.short = short
            print(wda.url, flush=True)
            stop.wait()
    finally:
        phone.stop()
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="crease-rig", description="Run a Crease tour on a phone through Appium.")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run a tour (crease plan --tour -o TOUR.jsonl) on the phone")
    run.add_argument("tour")
    run.add_argument("--rig", required=True, help="the rig file (RIG.json)")
    run.add_argument("--appium", required=True, help="the Appium (or WebDriverAgent) URL")
    run.add_argument("--socket", default=None, help="the rig's creased (default: $CREASE_SOCKET, …)")
    run.add_argument("--checkpoint", default=None, help="where to keep what was done, for --resume")
    run.add_argument("--resume", action="store_true", help="continue after the checkpoint's last step")
    run.add_argument("--stop-on-mismatch", action="store_true")
    run.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    standin = commands.add_parser("standin", help="serve the stand-in device and print its URL")
    standin.add_argument("--app", default="builtin:tabs")
    standin.add_argument("--port", type=int, default=0)
    standin.add_argument("--creased", default=None, help="the creased binary (default: $CREASE_BIN or PATH)")
    standin.add_argument("--fault", action="append", default=[])
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0) if e.code in (0, None) else 2
    return _run(args) if args.command == "run" else _standin(args)


if __name__ == "__main__":
    sys.exit(main())
