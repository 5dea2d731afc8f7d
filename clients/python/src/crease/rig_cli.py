"""``crease-rig``: a night's tour on a phone for labs that do not write Python (docs/rig.md).

    crease-rig run TOUR|PLAN --rig RIG.json --appium URL [--socket PATH] [--checkpoint PATH] [--resume] [--stop-on-mismatch]
    crease-rig reproduce TRACE --runs N (--seq N | --glitch KIND[:SUBJECT]) --rig RIG.json --appium URL [--socket PATH]
               [--speed S] [--observe as-recorded|every-change|none] [--json]
    crease-rig standin [--app FILE|builtin:NAME] [--port N] [--mjpeg-port N] [--trace-dir DIR] [--fault KIND:ARGS]... [--seed N]
    crease-rig frames judge SOURCE --trace TRACE [--rig RIG.json] [--json]

``run`` takes a tour (``crease plan --tour``) or a plan (``crease plan``, a reset before each
sequence) and exits 0 when every class or layout it looks at matched, 1 when some mismatched, 2 on
bad input or a device it cannot drive. ``standin`` starts the stand-in device (a creased of
its own plays the phone, recording into ``--trace-dir`` when given) and prints its WebDriver
URL as the first line of stdout and its MJPEG stream's URL as the second, then serves until
SIGINT or SIGTERM. Faults: ``misplace:ITEM:DY`` (that control reported DY points lower),
``slowsource:MS`` (each page source MS late), ``short:DEGREES`` (the hinge lands that much
short), ``intermittent:PROBABILITY:FAULT`` (that fault at each layout change with that
probability, drawn from ``--seed``), ``fastfold:DEGREES_PER_SECOND:FAULT`` (that fault while
the last fold was faster than that); on the screen: ``flash:PROBABILITY`` (one refresh of
the new layout mirrored at a layout change), ``lag:MS`` (each new layout shown MS late) and
``drift:ITEM:PT`` (that control sliding up to PT points during a fold that changes nothing).

``frames judge`` judges a screen recording, a directory of frames (``T.png``, T in ns on the
trace's axis) or a live MJPEG URL against a trace (docs/frames.md); exit 1 when a frame was
flagged.

``reproduce`` replays a captured trace on the phone ``--runs`` times, resetting between
runs, and prints how often the target came back: ``reproduced K of N`` (or, with ``--json``,
``{"runs", "reproduced", "at": [{"run", "seq", …}], "traces": [...], "warnings": [...]}``).
It exits 0 when the target came back at least once, 1 when it never did, 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import tempfile
import threading
import urllib.request
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from .client import Client, CreaseError
from .daemon import Daemon, DaemonError, find_binary
from .rig import Rig, RigError, read_steps
from .rigfile import RigFile, RigFileError, load_rig_file

__all__ = ["main"]


class _Refused(Exception):
    """Bad input or a device the command cannot drive: printed, exit 2."""


def _session(args: argparse.Namespace, command: str, rig_file: RigFile) -> Tuple[Rig, Any, Client]:
    """The Appium session at ``--appium`` and the client of ``--socket``'s creased, as a Rig."""
    try:
        from appium import webdriver
        from appium.options.ios import XCUITestOptions
    except ImportError:
        raise _Refused(f"{command} needs Appium-Python-Client (pip install 'crease[appium]')") from None
    try:
        client = Client(args.socket)
    except (OSError, CreaseError) as e:
        raise _Refused(f"cannot reach creased: {e}") from None
    try:
        driver = webdriver.Remote(command_executor=args.appium, options=XCUITestOptions())
    except Exception as e:  # the driver's own errors: the device cannot be driven
        client.close()
        raise _Refused(f"cannot start an Appium session at {args.appium}: {e}") from None
    hooks: Dict[str, Callable[[Dict[str, Any]], None]] = {}
    tilt_url = getattr(args, "tilt_url", None)
    if tilt_url is not None:
        hooks["motion"] = _tilt_stage(str(tilt_url))
    try:
        rig = Rig(driver, client, rig_file, hooks=hooks, screenshots=getattr(args, "screenshots", None))
    except RigError as e:
        driver.quit()
        client.close()
        raise _Refused(str(e)) from None
    return rig, driver, client


def _tilt_stage(url: str) -> Callable[[Dict[str, Any]], None]:
    """``--tilt-url``: a tilt stage behind HTTP, told each motion sample as ``POST URL
    {"gravity": [x, y, z]}`` and answering once the phone is there (the stand-in's is
    ``APPIUM/standin/tilt``). A stage that does not answer in 60 s, or answers an error,
    stops the run naming the sample."""
    def tilt(event: Dict[str, Any]) -> None:
        body = json.dumps({"gravity": event["gravity"]}).encode()
        request = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                answer.read(1 << 16)
        except (OSError, ValueError) as e:
            raise RigError(f"the tilt stage at {url} did not take {event['gravity']}: {e}", event) from None
    return tilt


def _refused(message: object) -> int:
    print(f"crease-rig: {message}", file=sys.stderr)
    return 2


def _run(args: argparse.Namespace) -> int:
    try:
        rig_file = load_rig_file(args.rig)
        steps = read_steps(args.tour)
        rig, driver, client = _session(args, "run", rig_file)
    except (OSError, ValueError, RigFileError, RigError, _Refused) as e:
        return _refused(e)
    try:
        result = rig.run(steps, checkpoint=args.checkpoint, resume=args.resume, stop_on_mismatch=args.stop_on_mismatch,
                         progress=None if args.quiet else (lambda line: print(line, file=sys.stderr)))
    except RigError as e:
        return _refused(e)
    finally:
        driver.quit()
        client.close()
    summary = {"matched": len(result.matched), "mismatched": sorted(result.mismatched), "steps": result.steps,
               "measuredCosts": rig.measured_costs()}
    print(json.dumps(summary))
    return 1 if result.mismatched else 0


def _reproduce(args: argparse.Namespace) -> int:
    from .reproduce import ReplayError, Target, read_trace
    try:
        target = Target.parse(seq=args.seq, glitch=args.glitch)
        if args.runs < 1:
            raise ValueError("--runs takes 1 or more")
        if args.speed <= 0:
            raise ValueError("--speed takes a number more than 0")
        rig_file = load_rig_file(args.rig)
        trace = read_trace(args.trace)
        rig, driver, client = _session(args, "reproduce", rig_file)
    except (OSError, ValueError, RigFileError, ReplayError, _Refused) as e:
        return _refused(e)
    try:
        result = rig.reproduce(trace, runs=args.runs, target=target, speed=args.speed, observe=args.observe)
    except (RigError, ReplayError) as e:
        return _refused(e)
    finally:
        driver.quit()
        client.close()
    if args.json:
        print(json.dumps(result.json()))
    else:
        for warning in result.warnings:
            print(f"warning: {warning}", file=sys.stderr)
        where = ", ".join(f"run {a['run']} at seq {a.get('seq')}" for a in result.at)
        print(f"reproduced {result.reproduced} of {result.runs}: {target.describe()}" + (f" ({where})" if where else ""))
    return 0 if result.reproduced > 0 else 1


FAULTS = ("misplace:ITEM:DY, slowsource:MS, short:DEGREES, intermittent:PROBABILITY:FAULT, fastfold:DEGREES_PER_SECOND:FAULT, "
          "flash:PROBABILITY, lag:MS, drift:ITEM:PT")
#: The faults of the screen (the MJPEG stream and recordings; lag also what the page source reads).
SCREEN_FAULTS = ("flash", "lag", "drift")


def parse_fault(text: str) -> Tuple[str, Tuple[Any, ...]]:
    """``misplace:ITEM:DY`` -> ("misplace", (ITEM, DY)); ``slowsource:MS`` -> ("slowsource",
    (seconds,)); ``short:DEGREES`` -> ("short", (degrees,)); ``flash:P`` -> ("flash", (P,));
    ``lag:MS`` -> ("lag", (seconds,)); ``drift:ITEM:PT`` -> ("drift", (ITEM, PT)).
    ValueError names what was expected."""
    kind, _, rest = text.partition(":")
    try:
        if kind in ("misplace", "drift"):
            item, _, dy = rest.rpartition(":")
            if not item:
                raise ValueError
            return kind, (item, float(dy))
        if kind in ("slowsource", "lag"):
            ms = float(rest)
            if ms < 0:
                raise ValueError
            return kind, (ms / 1000,)
        if kind == "short":
            return kind, (float(rest),)
        if kind == "flash":
            p = float(rest)
            if not 0 <= p <= 1:
                raise ValueError
            return kind, (p,)
    except ValueError:
        raise ValueError(f"--fault {text!r}: expected {FAULTS} with numbers (probabilities 0 to 1, times 0 or more)") from None
    raise ValueError(f"no fault {kind!r}; faults: {FAULTS}")


def _standin(args: argparse.Namespace) -> int:
    from .wda_standin import StandInWDA
    misplace: Dict[str, float] = {}
    slow = 0.0
    short = 0.0
    screen: Dict[str, Tuple[Any, ...]] = {}
    intermittent: List[Tuple[float, str, Tuple[Any, ...]]] = []
    when_fast: List[Tuple[float, str, Tuple[Any, ...]]] = []
    for fault in args.fault:
        try:
            if fault.startswith("fastfold:"):
                _, rate, inner = fault.split(":", 2)
                if float(rate) <= 0:
                    raise ValueError(f"--fault {fault!r}: the rate is degrees per second, more than 0")
                kind, values = parse_fault(inner)
                if kind in SCREEN_FAULTS:
                    raise ValueError(f"--fault {fault!r}: fastfold takes misplace, slowsource or short, not a screen fault")
                when_fast.append((float(rate), kind, values))
                continue
            if fault.startswith("intermittent:"):
                _, probability, inner = fault.split(":", 2)
                p = float(probability)
                if not 0 <= p <= 1:
                    raise ValueError(f"--fault {fault!r}: the probability is from 0 to 1")
                kind, values = parse_fault(inner)
                if kind in SCREEN_FAULTS:
                    raise ValueError(f"--fault {fault!r}: intermittent takes misplace, slowsource or short, not a screen fault")
                intermittent.append((p, kind, values))
                continue
            kind, values = parse_fault(fault)
        except ValueError as e:
            print(f"crease-rig: {e}", file=sys.stderr)
            return 2
        if kind == "misplace":
            misplace[str(values[0])] = float(values[1])
        elif kind == "slowsource":
            slow = float(values[0])
        elif kind == "short":
            short = float(values[0])
        else:
            screen[kind] = values
    try:
        phone = Daemon.start(find_binary(args.creased), workdir=tempfile.mkdtemp(prefix="crease-standin-"),
                             args=["--app", args.app], trace=args.trace_dir or False)
    except DaemonError as e:
        print(f"crease-rig: {e}", file=sys.stderr)
        return 2
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    try:
        with phone.connect() as device, StandInWDA(device, port=args.port, mjpeg_port=args.mjpeg_port) as wda:
            wda.misplace.update(misplace)
            wda.delay = slow
            wda.short = short
            wda.intermittent = intermittent
            wda.when_fast = when_fast
            wda.seed(args.seed)
            wda.screen.seed(args.seed)
            if "flash" in screen:
                wda.screen.flash_probability = float(screen["flash"][0])
            if "lag" in screen:
                wda.screen.lag_ns = int(float(screen["lag"][0]) * 1e9)
            if "drift" in screen:
                wda.screen.drift = (str(screen["drift"][0]), float(screen["drift"][1]))
            if screen and wda.stream is None:
                print("crease-rig: the screen faults need Pillow (pip install 'crease[frames]')", file=sys.stderr)
                return 2
            print(wda.url, flush=True)
            print(wda.mjpeg_url or "", flush=True)
            stop.wait()
    finally:
        phone.stop()
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="crease-rig", description="Run a Crease tour on a phone through Appium.")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run a tour (crease plan --tour -o TOUR.jsonl) or a plan (crease plan -o PLAN.jsonl) on the phone")
    run.add_argument("tour")
    run.add_argument("--rig", required=True, help="the rig file (RIG.json)")
    run.add_argument("--appium", required=True, help="the Appium (or WebDriverAgent) URL")
    run.add_argument("--socket", default=None, help="the rig's creased (default: $CREASE_SOCKET, …)")
    run.add_argument("--screenshots", default=None, help="a directory: each look's screenshot saved there as seq-SEQ.png (for crease report)")
    run.add_argument("--tilt-url", default=None, help="the tilt stage, for a tour's motion probes: each sample POSTed as {\"gravity\": [x, y, z]}")
    run.add_argument("--checkpoint", default=None, help="where to keep what was done, for --resume")
    run.add_argument("--resume", action="store_true", help="continue after the checkpoint's last step")
    run.add_argument("--stop-on-mismatch", action="store_true")
    run.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    again = commands.add_parser("reproduce", help="replay a captured trace on the phone N times and count the glitch")
    again.add_argument("trace")
    again.add_argument("--runs", type=int, required=True)
    again.add_argument("--seq", type=int, default=None, help="the look at this seq of the trace did not match")
    again.add_argument("--glitch", default=None, help="KIND[:SUBJECT], a glitch the rig's creased reports")
    again.add_argument("--rig", required=True, help="the rig file (RIG.json)")
    again.add_argument("--appium", required=True, help="the Appium (or WebDriverAgent) URL")
    again.add_argument("--socket", default=None, help="the rig's creased (default: $CREASE_SOCKET, …)")
    again.add_argument("--screenshots", default=None, help="a directory: each look's screenshot saved there as seq-SEQ.png (for crease report --against-screenshots)")
    again.add_argument("--speed", type=float, default=1.0, help="1: the recorded timing; 2: twice as fast")
    again.add_argument("--observe", choices=("as-recorded", "every-change", "none"), default="as-recorded")
    again.add_argument("--json", action="store_true")
    standin = commands.add_parser("standin", help="serve the stand-in device and print its URL")
    standin.add_argument("--app", default="builtin:tabs")
    standin.add_argument("--port", type=int, default=0)
    standin.add_argument("--creased", default=None, help="the creased binary (default: $CREASE_BIN or PATH)")
    standin.add_argument("--fault", action="append", default=[])
    standin.add_argument("--seed", type=int, default=0, help="seeds the intermittent faults' draws")
    standin.add_argument("--mjpeg-port", type=int, default=0, help="the MJPEG stream's port (default: any free one)")
    standin.add_argument("--trace-dir", default=None, help="the device daemon records what it was told here")
    frames = commands.add_parser("frames", help="judge the device's screen frame by frame against a trace")
    frames_commands = frames.add_subparsers(dest="frames_command", required=True)
    judge = frames_commands.add_parser("judge", help="judge a recording, a directory of frames or a live MJPEG URL")
    judge.add_argument("source", help="an MP4 recording, a directory of T.png frames, or an http:// MJPEG URL")
    judge.add_argument("--trace", required=True, help="the trace the device is judged against")
    judge.add_argument("--rig", default=None, help="the rig file (its device.frames: delayMs, scale, mask, …)")
    judge.add_argument("--json", action="store_true", help="one line per flagged frame, then a summary line")
    judge.add_argument("--seconds", type=float, default=None, help="a live stream: stop after this long (default: until SIGINT)")
    judge.add_argument("--filmstrip", default=None, metavar="DIR",
                       help="a PNG per flagged frame: the frames around it beside the picture the model expected")
    judge.add_argument("--recording-start", type=int, default=None,
                       help="a phone's recording: when it was started (CLOCK_MONOTONIC ns); the delay is added")
    judge.add_argument("--crease", default=None, help="the crease command (default: beside $CREASE_BIN, or PATH)")
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0) if e.code in (0, None) else 2
    if args.command == "frames":
        from .frames.cli import judge_command
        return judge_command(args)
    return {"run": _run, "reproduce": _reproduce, "standin": _standin}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
