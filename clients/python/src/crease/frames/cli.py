"""``crease-rig frames judge SOURCE --trace TRACE [--rig RIG.json] [--json] [--filmstrip DIR]``.

SOURCE is a screen recording (MP4), a directory of ``T.png`` frames, or a live MJPEG URL
(read for ``--seconds``, or until SIGINT, then judged). Exit 1 when a frame was flagged,
0 when none was, 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import time
from typing import Any, Callable, Dict, Iterable, Mapping, Optional

from ..daemon import DaemonError, find_cli
from ..rigfile import RigFileError, load_rig_file
from .judge import JudgeOptions
from .live import FrameRecorder, Judgement, judge_frames
from .sources import Frame, FrameSourceError, align_recording, describe_recording, png_frames, recording_frames
from .timeline import TimelineError, read_timeline

__all__ = ["judge_command", "frames_settings"]


def frames_settings(device: Mapping[str, Any]) -> Dict[str, Any]:
    """The rig file's ``device.frames`` (an object; empty when left out)."""
    frames = device.get("frames") or {}
    if not isinstance(frames, dict):
        raise ValueError("device.frames must be an object")
    return frames


def _print(judgement: Judgement, as_json: bool) -> None:
    if as_json:
        for line in judgement.lines():
            print(json.dumps(line, separators=(",", ":")))
        return
    for flag in judgement.flags:
        extra = f" ({flag.relayout_ms:.0f} ms)" if flag.relayout_ms is not None else ""
        print(f"{flag.kind} at t={flag.t / 1e9:.3f} s, seq {flag.seq}, frame {flag.frame}{extra}")
    s = judgement.summary
    relayout = s["relayoutMs"]
    print(f"{s['frames']} frames, {s['flagged']} flagged "
          f"({', '.join(f'{k} {v}' for k, v in s['byKind'].items())}); "
          f"relayout p50 {relayout['p50']} ms, p99 {relayout['p99']} ms over {relayout['count']}"
          + (f"; {s['unseen']} model changes not seen on screen" if s["unseen"] else ""))
    alignment = s.get("alignment")
    if alignment:
        print(f"aligned by {alignment['how']}")


def judge_command(args: argparse.Namespace) -> int:
    try:
        settings: Dict[str, Any] = {}
        if args.rig:
            settings = frames_settings(load_rig_file(args.rig).device)
        options = JudgeOptions.from_rig(settings)
        delay_ns = int(float(settings.get("delayMs", 0)) * 1e6)
        source_ppp = float(settings["scale"]) if settings.get("scale") else None
        crease = find_cli(args.crease)
        source = str(args.source)
        frames: Callable[[], Iterable[Frame]]
        if "://" in source and not source.startswith("http://"):
            raise FrameSourceError(f"an MJPEG source is an http:// URL, not {source!r}")
        if source.startswith("http://"):
            timeline_origin = _origin_of(args.trace)
            recorder = FrameRecorder(source, timeline_origin, delay_ns)
            _watch(recorder, args.seconds)
            if recorder.error is not None:
                raise FrameSourceError(str(recorder.error))
            timeline = read_timeline(args.trace, crease)
            frames = recorder.frames
            alignment = recorder.alignment()
        elif os.path.isdir(source):
            timeline = read_timeline(args.trace, crease)
            frames = lambda: png_frames(source)  # noqa: E731
            alignment = {"how": "each file's name (ns on the trace's axis)"}
        else:
            timeline = read_timeline(args.trace, crease)
            info = describe_recording(source)
            first, how = align_recording(info, timeline.origin_ns, delay_ns, args.recording_start)
            frames = lambda: recording_frames(source, info, first, source_ppp=source_ppp)  # noqa: E731
            alignment = {"how": how, "firstFrameT": first, "fps": info["fps"]}
        judgement = judge_frames(frames(), timeline, options, source_ppp=source_ppp, alignment=alignment)
        if args.filmstrip:
            from .filmstrip import write_filmstrips
            strips = write_filmstrips(frames(), judgement.flags, timeline, args.filmstrip)
            print(f"crease-rig frames judge: {len(strips)} filmstrips in {args.filmstrip}", file=sys.stderr)
    except (OSError, ValueError, RigFileError, DaemonError, FrameSourceError, TimelineError) as e:
        print(f"crease-rig frames judge: {e}", file=sys.stderr)
        return 2
    _print(judgement, args.json)
    return 1 if judgement.flags else 0


def _origin_of(trace: str) -> int:
    from ..client import trace_monotonic_origin
    origin = trace_monotonic_origin(trace)
    if origin is None:
        raise TimelineError(f"{trace}: its header has no monotonicOrigin, so frames cannot be set against it")
    return origin


def _watch(recorder: FrameRecorder, seconds: Optional[float]) -> None:
    """Reads the stream for ``seconds`` (or until SIGINT / SIGTERM), saying how many frames came."""
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        recorder.start()
        end = None if seconds is None else time.monotonic() + seconds
        while not stop.is_set() and (end is None or time.monotonic() < end) and recorder.error is None:
            stop.wait(1.0 if end is None else max(0.0, min(1.0, end - time.monotonic())))
            print(f"crease-rig frames judge: {recorder.count} frames read", file=sys.stderr)
    finally:
        recorder.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
