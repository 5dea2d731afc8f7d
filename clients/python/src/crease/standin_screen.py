"""What the stand-in device's screen shows at each moment, and the faults it injected.

The stand-in's app changes its layout when its daemon says so; the screen shows each new
layout from then on (``lag``: that many seconds later), refreshing 60 times a second.
Seeded faults a frame-by-frame judge must find:

- ``flash`` (a probability): at a layout change that keeps the screen's size, the new
  layout mirrored (its bar on the wrong side) for one refresh, drawn at each change from a
  seeded generator;
- ``lag`` (seconds): every new picture appears that late (the page source reads the screen,
  so it sees the old layout meanwhile);
- ``drift`` (an item and points): during a fold that leaves the layout as it was, that
  control jumps a quarter of that many points down, slides to all of them and back over 0.3 s.

Every injected fault is listed with its time on the device trace's ``t`` axis (ns since the
device daemon's ``monotonicOrigin``) and the seq it belongs to. Standard library only: the
drawing lives in :mod:`crease.frames.stream`.
"""

from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from .frames.boxes import Box, picture_key

__all__ = ["StandInScreen", "Picture", "REFRESH_NS", "DRIFT_NS"]

#: One refresh of the screen at 60 Hz, in ns: how long a flash lasts.
REFRESH_NS = 1_000_000_000 // 60
#: How long a drift takes, down and back.
DRIFT_NS = 300_000_000
#: Layouts kept to answer "what was shown at t" (the oldest are dropped).
HISTORY = 256


@dataclass(frozen=True)
class Picture:
    """What the screen shows: its size in points and its boxes, in drawing order."""

    size: Tuple[float, float]
    boxes: Tuple[Box, ...]


@dataclass
class _Shown:
    """A layout from the time the screen shows it (``lag`` after the daemon published it)."""

    t: int            # CLOCK_MONOTONIC ns
    seq: int
    layout: Mapping[str, Any]
    key: Any
    flash: bool = False


class StandInScreen:
    """The screen's history and faults; every method may be called from any thread."""

    def __init__(self, layout: Mapping[str, Any], seq: int = 0, *, origin_ns: Optional[int] = None) -> None:
        self.lag_ns = 0
        self.flash_probability = 0.0
        self.drift: Optional[Tuple[str, float]] = None
        #: The device trace's monotonicOrigin: fault times are given on its ``t`` axis.
        self.origin_ns = origin_ns
        self.random = random.Random(0)
        self._lock = threading.Lock()
        self._shown: List[_Shown] = [_Shown(0, seq, layout, picture_key(layout))]
        self._drifts: List[Tuple[int, str, float]] = []   # (start, item, points)
        self._faults: List[Dict[str, Any]] = []
        #: Called with each new picture as it is published, before it is shown (the stream
        #: draws it then, so a frame is never late for its drawing).
        self.listeners: List[Callable[[Picture], None]] = []

    def seed(self, seed: int) -> None:
        self.random.seed(seed)

    def _fault(self, kind: str, at: int, seq: int) -> None:
        self._faults.append({"kind": kind, "t": at - (self.origin_ns or 0), "seq": seq, "monotonicNs": at})

    def published(self, layout: Mapping[str, Any], seq: int, now: Optional[int] = None) -> None:
        """The daemon published ``layout`` at ``seq`` (now, unless ``now`` says when); the
        same layout again changes nothing."""
        key = picture_key(layout)
        with self._lock:
            # Read under the lock the stream reads the history with: a frame composed before
            # this is older than `at`, one composed after sees the new layout.
            at = (time.monotonic_ns() if now is None else now) + self.lag_ns
            if layout.get("digest") is not None and layout.get("digest") == self._shown[-1].layout.get("digest"):
                return
            if key == self._shown[-1].key:
                self._shown[-1] = _Shown(self._shown[-1].t, self._shown[-1].seq, layout, key, self._shown[-1].flash)
                return
            # Only where the screen keeps its size: at a fold to the other display or a turn
            # every pixel changes, and a judge of changed pixels cannot tell a flash there.
            flash = (self.flash_probability > 0 and self.random.random() < self.flash_probability
                     and key[0] == self._shown[-1].key[0])
            self._shown.append(_Shown(at, seq, layout, key, flash))
            del self._shown[:-HISTORY]
            if flash:
                self._fault("flash", at, seq)
            if self.lag_ns > 0:
                self._fault("lateRelayout", at, seq)
        size, boxes = key
        pictures = [Picture(size, boxes)] + ([Picture(size, tuple(b.mirrored(size[0]) for b in boxes))] if flash else [])
        for listener in self.listeners:
            for picture in pictures:
                listener(picture)

    def folded(self, seq: int, changed: bool, now: Optional[int] = None) -> None:
        """A fold reached the device (its event at ``seq``); one that left the layout as it
        was starts the drift fault."""
        if self.drift is None or changed:
            return
        with self._lock:
            at = time.monotonic_ns() if now is None else now
            item, points = self.drift
            shown = self._at(at)
            if not any(b.kind == "item" and b.ident == item for b in shown.key[1]):
                return  # the control is not on screen: nothing drifts, no fault to find
            if self._drifts and at < self._drifts[-1][0] + DRIFT_NS:
                return  # still drifting from the last fold
            self._drifts.append((at, item, points))
            del self._drifts[:-HISTORY]
            self._fault("unexpectedMotion", at, seq)

    def _at(self, t: int) -> _Shown:
        for shown in reversed(self._shown):
            if shown.t <= t:
                return shown
        return self._shown[0]

    def layout_at(self, t: Optional[int] = None) -> Mapping[str, Any]:
        """The layout on screen at ``t`` (CLOCK_MONOTONIC ns; now when None)."""
        with self._lock:
            return self._at(time.monotonic_ns() if t is None else t).layout

    def picture_at(self, t: int) -> Picture:
        """The picture at ``t`` with the faults applied."""
        with self._lock:
            shown = self._at(t)
            drifts = list(self._drifts)
        size, boxes = shown.key
        if shown.flash and t < shown.t + REFRESH_NS:
            boxes = tuple(b.mirrored(size[0]) for b in boxes)
        for start, item, points in drifts:
            if start <= t < start + DRIFT_NS:
                phase = (t - start) / DRIFT_NS
                # A quarter of the way at once, so the first frame of the drift already shows it.
                dy = round(points * (0.25 + 0.75 * (1 - abs(2 * phase - 1))))
                boxes = tuple(b.shifted(0, dy) if b.kind == "item" and b.ident == item else b for b in boxes)
        return Picture(size, boxes)

    def faults(self) -> List[Dict[str, Any]]:
        """Every fault injected so far: ``{"kind", "t", "seq", "monotonicNs"}``."""
        with self._lock:
            return [dict(f) for f in self._faults]

