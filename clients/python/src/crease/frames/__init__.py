"""Judging the device's screen frame by frame against the model (docs/frames.md).

``pip install 'crease[frames]'`` (NumPy and Pillow; Debian's ffmpeg for recordings). The
pieces: :mod:`.boxes` (what a layout puts where: standard library), :mod:`.timeline` (the
layout on screen at each moment of a trace), :mod:`.sources` (MJPEG, recordings, PNGs),
:mod:`.judge` (the judge), :mod:`.live` (watching a stream during a run), :mod:`.calibrate`
(the stream's delay) and :mod:`.stream` (the stand-in's screen, served).

Names are imported on first use, so ``crease.frames.boxes`` needs neither NumPy nor Pillow.
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {"FrameJudge": "judge", "JudgeOptions": "judge", "Flag": "judge", "Frame": "sources", "mjpeg_frames": "sources",
          "recording_frames": "sources", "png_frames": "sources", "describe_recording": "sources",
          "align_recording": "sources", "read_timeline": "timeline", "Timeline": "timeline", "judge_frames": "live",
          "FrameRecorder": "live", "Judgement": "live", "calibrate_delay": "calibrate", "write_delay": "calibrate"}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'crease.frames' has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
