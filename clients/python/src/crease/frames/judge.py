"""The model-guided frame judge (docs/frames.md): it needs no picture of what the device
should look like, only where the model put every box and when it changed.

Between consecutive frames it finds the pixels that changed (grey, about 2 points a pixel,
beyond a noise threshold learnt from frames where the model changed nothing) and sets them
against the model:

- a change inside the boxes a model change moved (where they were and where they went),
  from that change on, is the relayout: its latency runs from the change to the last frame
  that still changed there before the screen held still (``lateRelayout`` beyond a bound);
- a change elsewhere that changes back within a few frames, on a screen that was still
  before it, is a ``flash``;
- any other change outside the masked regions (the status bar, and what the rig file
  masks) is ``unexpectedMotion``, once per episode.

Memory is a fixed number of frames. Needs NumPy and Pillow (the ``frames`` extra).
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Deque, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np
from numpy.typing import NDArray

from .boxes import CONTROL_KINDS, Box, moved_boxes
from .sources import Frame, decode_gray
from .timeline import ModelLayout, Timeline

__all__ = ["FrameJudge", "Flag", "JudgeOptions", "KINDS", "percentile"]

KINDS = ("flash", "unexpectedMotion", "lateRelayout")
#: Model changes kept explaining the screen at once (the newest).
MAX_WINDOWS = 16
#: The system's regions, never judged (the clock ticks, the island animates).
STATIC_KINDS = ("statusBar", "dynamicIsland")
Mask = NDArray[Any]


@dataclass(frozen=True)
class JudgeOptions:
    """What the judge tolerates. ``flash_frames``: the longest transient that is a flash;
    ``stable_frames``: still frames that end a relayout or a motion; ``late_ms``: a relayout
    slower than this is flagged; ``lead_ms``: how early the screen may change before the
    trace records the event (a rig tells its creased after the phone moved); ``max_wait_ms``:
    a relayout not begun by then is counted unseen; ``min_pixels``: fewer changed pixels are
    noise; ``noise``: a fixed threshold (grey levels) instead of the learnt one; ``masks``:
    rectangles in points never judged; ``mask_content``: the app's content (everything but
    the bars and controls) is not judged, for an app whose content moves."""

    flash_frames: int = 3
    stable_frames: int = 3
    late_ms: float = 250.0
    lead_ms: float = 0.0
    max_wait_ms: float = 5000.0
    min_pixels: int = 4
    noise: Optional[int] = None
    masks: Tuple[Tuple[float, float, float, float], ...] = ()
    mask_content: bool = False

    @classmethod
    def from_rig(cls, frames: Mapping[str, Any]) -> "JudgeOptions":
        """From a rig file's ``device.frames`` (``lateMs``, ``leadMs``, ``flashFrames``,
        ``stableFrames``, ``noise``, ``mask``: ``[[x, y, w, h]…]`` or ``"content"`` among them)."""
        masks: List[Tuple[float, float, float, float]] = []
        content = False
        for m in frames.get("mask") or []:
            if m == "content":
                content = True
            elif isinstance(m, list) and len(m) == 4 and all(isinstance(v, (int, float)) for v in m):
                masks.append((float(m[0]), float(m[1]), float(m[2]), float(m[3])))
            else:
                raise ValueError(f'device.frames.mask: {m!r} is neither [x, y, w, h] in points nor "content"')
        return cls(flash_frames=int(frames.get("flashFrames", 3)), stable_frames=int(frames.get("stableFrames", 3)),
                   late_ms=float(frames.get("lateMs", 250)), lead_ms=float(frames.get("leadMs", 0)),
                   noise=None if frames.get("noise") is None else int(frames["noise"]), masks=tuple(masks), mask_content=content)


@dataclass
class Flag:
    """A flagged frame: its kind, its time (ns, the trace's axis), the seq it belongs to, the
    frame's number, the changed region's bounding box in points, and for a relayout its
    latency in ms."""

    kind: str
    t: int
    seq: int
    frame: int
    region: Optional[Tuple[float, float, float, float]] = None
    relayout_ms: Optional[float] = None

    def json(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"kind": self.kind, "t": self.t, "seq": self.seq, "frame": self.frame}
        if self.region is not None:
            out["region"] = {"x": self.region[0], "y": self.region[1], "w": self.region[2], "h": self.region[3]}
        if self.relayout_ms is not None:
            out["relayoutMs"] = round(self.relayout_ms, 1)
        return out


@dataclass
class _Window:
    """A model change the screen is expected to show: the boxes it moved, as a mask."""

    index: int                 # the timeline's layout index
    t: int
    seq: int
    moved: Optional[List[Box]]  # None: the whole screen changed
    distance: float            # the model's layout-shift distance fraction
    controls: List[Tuple[float, float, float, float]]  # moved controls, before and after
    onset: Optional[int] = None
    onset_frame: int = 0
    last: int = 0
    last_frame: int = 0
    quiet: int = 0
    before: Optional[Mask] = None
    measured: bool = False
    superseded: bool = False


@dataclass
class _Recent:
    """A recent frame: its pixels, and the changes since the frame before that nothing explained."""

    frame: int
    t: int
    gray: Mask
    before: Optional[Mask]
    unexplained: Optional[Mask]
    still_before: bool
    consumed: bool = False


def percentile(values: Sequence[float], p: float) -> Optional[float]:
    """The nearest-rank percentile (None of nothing)."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, math.ceil(p / 100 * len(ordered)) - 1))]


def _rect(box: Tuple[float, float, float, float], ppp: float, shape: Tuple[int, ...], pad: int) -> Tuple[slice, slice]:
    x, y, w, h = box
    x0, y0 = max(0, int(math.floor(x * ppp)) - pad), max(0, int(math.floor(y * ppp)) - pad)
    x1, y1 = min(shape[1], int(math.ceil((x + w) * ppp)) + pad), min(shape[0], int(math.ceil((y + h) * ppp)) + pad)
    return slice(y0, max(y0, y1)), slice(x0, max(x0, x1))


def _xywh(b: Box) -> Tuple[float, float, float, float]:
    return (b.x, b.y, b.w, b.h)


class FrameJudge:
    """Feed it frames in time order (:meth:`feed`), then :meth:`finish`; each returns the
    frames it flagged. :meth:`summary` says what it saw."""

    def __init__(self, timeline: Timeline, options: JudgeOptions = JudgeOptions(), *, source_ppp: Optional[float] = None) -> None:
        self.timeline = timeline
        self.options = options
        self.source_ppp = source_ppp
        self.frames = 0
        self.flags: List[Flag] = []
        self.relayout_ms: List[float] = []
        self.unseen = 0
        self.superseded = 0
        self._prev: Optional[Tuple[Mask, float]] = None
        self._prev_data: Optional[bytes] = None
        self._prev_changed = False
        # The last flash_frames + 1 frames: a flash is known only once the screen is back.
        self._recent: Deque[_Recent] = deque()
        self._windows: List[_Window] = []
        # Windows dropped by the MAX_WINDOWS cap while the screen may still show them: their
        # boxes keep explaining change until the wait after their change runs out, by box set
        # (a fast tour revisits a few), each with the latest such change.
        self._lingering: Dict[Optional[Tuple[Box, ...]], Tuple[_Window, int]] = {}
        #: Windows the cap dropped before they settled.
        self.dropped = 0
        self._next_change = 1
        self._masks: Dict[Tuple[Any, ...], Mask] = {}
        self._quiet_diffs: List[int] = []
        self._threshold = options.noise if options.noise is not None else 16
        self._motion_last: Optional[int] = None   # the frame of the current motion episode's last change
        self._shift: List[Tuple[int, float, int]] = []  # (t, score, frame) of the device's shifts
        self._model_shift: List[Tuple[int, float, int]] = []  # the model's, at the frame its change reached
        self._pad = 1                    # mask padding in pixels (a codec block and one)
        self._pending: List[Flag] = []   # flags raised while opening windows, returned with the frame

    # -- masks

    def _mask(self, key: Tuple[Any, ...], shape: Tuple[int, ...], ppp: float, rects: Sequence[Tuple[float, float, float, float]],
              pad: int) -> Mask:
        cached = self._masks.get((key, shape, ppp, pad))
        if cached is not None:
            return cached
        mask = np.zeros(shape[:2], dtype=bool)
        for rect in rects:
            mask[_rect(rect, ppp, shape, pad)] = True
        if len(self._masks) > 256:
            self._masks.clear()
        self._masks[(key, shape, ppp, pad)] = mask
        return mask

    def _ignored(self, layout: ModelLayout, shape: Tuple[int, ...], ppp: float) -> Mask:
        """What is never judged on this layout's screen: the system's regions, the rig's
        masks, the content when masked, and what lies off the screen (a recording's canvas)."""
        rects = [_xywh(b) for b in layout.boxes if b.kind in STATIC_KINDS] + list(self.options.masks)
        mask = self._mask(("ignored", layout.digest), shape, ppp, rects, self._pad).copy()
        on_screen = self._mask(("screen", layout.size), shape, ppp, [(0, 0, layout.size[0], layout.size[1])], 0)
        mask |= ~on_screen
        if self.options.mask_content:
            drawn = self._mask(("drawn", layout.digest), shape, ppp,
                               [_xywh(b) for b in layout.boxes if b.kind not in STATIC_KINDS], self._pad)
            mask |= ~drawn
        return mask

    def _moved_mask(self, window: _Window, shape: Tuple[int, ...], ppp: float) -> Mask:
        if window.moved is None:
            return self._mask(("all",), shape, ppp, [(-1e6, -1e6, 2e6, 2e6)], 0)
        # Padded by a codec block: a JPEG's 8 × 8 (an H.264 macroblock's 16 × 16) pixels all
        # change when part of them does.
        return self._mask(("moved", window.index), shape, ppp, [_xywh(b) for b in window.moved], self._pad)

    # -- the model

    def _open_windows(self, t: int) -> None:
        """Opens a window for each model change the screen may show by ``t``."""
        layouts = self.timeline.layouts
        lead = int(self.options.lead_ms * 1e6)
        while self._next_change < len(layouts) and layouts[self._next_change].t - lead <= t:
            i = self._next_change
            self._next_change += 1
            before, after = layouts[i - 1], layouts[i]
            if before.size != after.size:
                moved: Optional[List[Box]] = None   # a fold to the other display, a turn: every pixel
            else:
                moved = moved_boxes(before.boxes, after.boxes)
                if not any(b.kind not in STATIC_KINDS for b in moved):
                    continue  # nothing the screen shows changed (a badge, a diagnostic)
            # The next change ends the relayouts before it: one begun on screen is measured up
            # to its last change so far, one not begun is superseded (never on screen alone).
            # A superseded window still explains its boxes a while: a slow device may yet show it.
            for w in self._windows:
                if w.measured:
                    continue
                if w.onset is None:
                    self.superseded += 1
                    w.measured = w.superseded = True
                else:
                    self._pending += self._measure(w)
            # Changes faster than frames (a fast tour: one every few ms) would keep hundreds of
            # windows open, each costing every frame a mask: the newest few explain enough.
            for w in self._windows[:-MAX_WINDOWS]:
                if w.onset is None or w.quiet < self.options.stable_frames:
                    self.dropped += 1
                    self._lingering[None if w.moved is None else tuple(w.moved)] = (w, w.t)
            del self._windows[:-MAX_WINDOWS]
            controls = self._moved_controls(before, after)
            self._windows.append(_Window(i, after.t, after.seq, moved, self._distance(controls, after), controls))
            self._model_shift.append((after.t, self._model_score(controls, after), i))

    @staticmethod
    def _distance(rects: List[Tuple[float, float, float, float]], after: ModelLayout) -> float:
        """The layout-shift distance fraction: the greatest move of a moved control, over the
        screen's longer side (``rects`` alternate before and after)."""
        if not rects:
            return 0.0
        moves = (max(abs(a[0] - b[0]), abs(a[1] - b[1])) for a, b in zip(rects[0::2], rects[1::2]))
        return max(moves) / (max(after.size) or 1.0)

    @staticmethod
    def _moved_controls(before: ModelLayout, after: ModelLayout) -> List[Tuple[float, float, float, float]]:
        """The frames, before and after, of the controls that moved by 1 pt or more."""
        if before.size != after.size:
            return []
        where = {(b.kind, b.ident): b for b in before.boxes if b.kind in CONTROL_KINDS}
        rects: List[Tuple[float, float, float, float]] = []
        for b in after.boxes:
            old = where.get((b.kind, b.ident))
            if old is not None and (abs(old.x - b.x) >= 1 or abs(old.y - b.y) >= 1):
                rects += [_xywh(old), _xywh(b)]
        return rects

    def _model_score(self, rects: List[Tuple[float, float, float, float]], after: ModelLayout) -> float:
        """The model's layout shift for one change (the trace info formula), on the judge's grid."""
        if not rects:
            return 0.0
        ppp = 0.5
        shape = (max(1, round(after.size[1] * ppp)), max(1, round(after.size[0] * ppp)))
        union = np.zeros(shape, dtype=bool)
        for r in rects:
            union[_rect(r, ppp, shape, 0)] = True
        return float(union.sum()) / union.size * self._distance(rects, after)

    # -- frames

    def _pixels(self, frame: Frame, layout: ModelLayout) -> Tuple[Mask, float, float]:
        """The frame's grey pixels, their pixels a point, and its codec block in points."""
        if frame.gray is not None:
            ppp = frame.ppp if frame.ppp else frame.gray.shape[1] / max(1.0, layout.size[0])
            return frame.gray, ppp, frame.block_pt
        assert frame.data is not None
        return decode_gray(frame.data, self.source_ppp, layout.size[0])

    def feed(self, frame: Frame) -> List[Flag]:
        """Judges one frame; returns what became flagged with it (a flash or a motion is known
        a few frames after it began)."""
        self.frames += 1
        layout = self.timeline.layouts[self.timeline.index_at(frame.t)]
        if frame.data is not None and frame.data == self._prev_data and self._prev is not None:
            gray, ppp = self._prev   # the same bytes: the same picture, nothing to decode
        else:
            gray, ppp, block_pt = self._pixels(frame, layout)
            self._pad = 1 + math.ceil(block_pt * ppp)
        self._prev_data = frame.data
        self._open_windows(frame.t)
        flagged: List[Flag] = self._pending
        self._pending = []
        previous = self._prev
        self._prev = (gray, ppp)
        if previous is None or previous[0].shape != gray.shape or abs(previous[1] - ppp) > 1e-9:
            # The first frame, or the screen changed size: nothing to compare with.
            for w in self._windows:
                if w.onset is None and previous is not None:
                    w.onset, w.onset_frame = frame.t, frame.index
                    w.last, w.last_frame = frame.t, frame.index
            flagged += self._motions(final=True)
            self._recent.append(_Recent(frame.index, frame.t, gray, None, None, False))
            self._prev_changed = previous is not None
            return flagged + self._settle(frame)
        diff = np.abs(gray.astype(np.int16) - previous[0].astype(np.int16))
        changed = diff > self._threshold
        ignored = self._ignored(layout, gray.shape, ppp)
        changed &= ~ignored
        explained = np.zeros(gray.shape, dtype=bool)
        wait = int(self.options.max_wait_ms * 1e6)
        for key, (w, since) in list(self._lingering.items()):
            if frame.t - since > wait:
                del self._lingering[key]
            else:
                explained |= self._moved_mask(w, gray.shape, ppp)
        for w in self._windows:
            moved = self._moved_mask(w, gray.shape, ppp)
            explained |= moved
            if w.measured:
                if int((changed & moved).sum()) >= self.options.min_pixels:
                    w.onset = frame.t if w.onset is None else w.onset
                    w.quiet = 0
                else:
                    w.quiet += 1
            elif int((changed & moved).sum()) >= self.options.min_pixels:
                if w.onset is None:
                    w.onset, w.onset_frame, w.before = frame.t, frame.index, previous[0]
                w.last, w.last_frame, w.quiet = frame.t, frame.index, 0
            elif w.onset is not None:
                w.quiet += 1
        unexplained = changed & ~explained
        any_change = int(changed.sum()) >= self.options.min_pixels
        if not any_change and not self._windows:
            self._learn_noise(diff, ignored)
        has_unexplained = int(unexplained.sum()) >= self.options.min_pixels
        self._recent.append(_Recent(frame.index, frame.t, gray, previous[0], unexplained if has_unexplained else None,
                                    still_before=not self._prev_changed))
        self._prev_changed = any_change
        flagged += self._flashes(gray)
        flagged += self._motions(final=False)
        flagged += self._settle(frame)
        return flagged

    def _learn_noise(self, diff: Mask, ignored: Mask) -> None:
        """From still frames: the threshold stays above what the screen does when nothing moves."""
        if self.options.noise is not None or len(self._quiet_diffs) >= 600:
            return
        judged = diff[~ignored]
        if judged.size:
            self._quiet_diffs.append(int(np.percentile(judged, 99.9)))
            self._threshold = max(16, 3 * sorted(self._quiet_diffs)[len(self._quiet_diffs) // 2])

    def _flashes(self, gray: Mask) -> List[Flag]:
        """A transient begun on a still screen that is back to its picture before within
        ``flash_frames`` frames, where no model change explains it."""
        out: List[Flag] = []
        recent = list(self._recent)
        for i, entry in enumerate(recent[:-1]):
            if entry.consumed or entry.unexplained is None or entry.before is None or not entry.still_before:
                continue
            if len(recent) - 1 - i > self.options.flash_frames:
                continue
            back = np.abs(gray.astype(np.int16) - entry.before.astype(np.int16)) <= self._threshold
            region = entry.unexplained
            if int((back & region).sum()) >= 0.9 * int(region.sum()):
                for later in recent[i:]:
                    later.consumed = True
                out.append(Flag("flash", entry.t, self._layout_seq(entry.t), entry.frame, self._region(region, gray)))
        self.flags += out
        return out

    def _motions(self, final: bool) -> List[Flag]:
        """Unexplained changes too old to be a flash: motion, once per episode."""
        out: List[Flag] = []
        while self._recent and (final or len(self._recent) > self.options.flash_frames + 1):
            entry = self._recent.popleft()
            if entry.consumed or entry.unexplained is None:
                continue
            if self._motion_last is not None and entry.frame - self._motion_last <= self.options.stable_frames:
                self._motion_last = entry.frame
                continue
            self._motion_last = entry.frame
            region = self._region(entry.unexplained, entry.gray)
            out.append(Flag("unexpectedMotion", entry.t, self.timeline.seq_at(entry.t), entry.frame, region))
            if region is not None:
                longer = max(self.timeline.layouts[self.timeline.index_at(entry.t)].size) or 1.0
                impact = float(entry.unexplained.sum()) / entry.unexplained.size
                self._shift.append((entry.t, impact * max(region[2], region[3]) / longer, entry.frame))
        self.flags += out
        return out

    def _measure(self, w: _Window) -> List[Flag]:
        """A relayout the screen has shown: its latency, its share of the device's layout shift,
        and a flag when it was late. A window stays (explaining changes in its boxes) until
        the screen holds still."""
        w.measured = True
        ms = max(0.0, (w.last - w.t) / 1e6)
        self.relayout_ms.append(ms)
        if w.controls and w.before is not None and self._prev is not None and w.before.shape == self._prev[0].shape:
            # The device's impact: what changed on screen within the moved controls' frames.
            gray, ppp = self._prev
            moved = np.abs(gray.astype(np.int16) - w.before.astype(np.int16)) > self._threshold
            inside = self._mask(("controls", w.index), gray.shape, ppp, w.controls, 0)
            size = self.timeline.layouts[w.index].size
            screen = self._mask(("screen", size), gray.shape, ppp, [(0, 0, size[0], size[1])], 0)
            self._shift.append((w.last, float((moved & inside).sum()) / max(1, int(screen.sum())) * w.distance, w.last_frame))
        if ms > self.options.late_ms:
            flag = Flag("lateRelayout", w.last, w.seq, w.last_frame, None, ms)
            self.flags.append(flag)
            return [flag]
        return []

    def _settle(self, frame: Frame) -> List[Flag]:
        """Relayouts the screen has finished (or never began)."""
        out: List[Flag] = []
        keep: List[_Window] = []
        wait = int(self.options.max_wait_ms * 1e6)
        for w in self._windows:
            if w.onset is not None and w.quiet >= self.options.stable_frames:
                if not w.measured:
                    out += self._measure(w)
            elif w.onset is None and frame.t - w.t > wait:
                self.unseen += not w.superseded
            else:
                keep.append(w)
        self._windows = keep
        return out

    def _layout_seq(self, t: int) -> int:
        return self.timeline.layouts[self.timeline.index_at(t)].seq

    def _region(self, mask: Mask, gray: Mask) -> Optional[Tuple[float, float, float, float]]:
        ys, xs = np.nonzero(mask)
        if not len(xs):
            return None
        prev_ppp = self._prev[1] if self._prev is not None else 1.0
        ppp = prev_ppp or 1.0
        return (round(float(xs.min()) / ppp, 1), round(float(ys.min()) / ppp, 1),
                round(float(xs.max() - xs.min() + 1) / ppp, 1), round(float(ys.max() - ys.min() + 1) / ppp, 1))

    def finish(self) -> List[Flag]:
        """Judges what is still pending at the end of the source."""
        out = self._pending + self._motions(final=True)
        self._pending = []
        for w in self._windows:
            if w.onset is not None and not w.measured:
                out += self._measure(w)
        self._windows = []
        return out

    @staticmethod
    def _windows_of(shifts: List[Tuple[int, float, int]]) -> Dict[str, Any]:
        """Session windows as the web's CLS sums them: gaps under 1 s, at most 5 s; each
        with the frame it ends at."""
        windows: List[Dict[str, Any]] = []
        start = last = None
        frame = 0
        total = 0.0
        for t, score, at in sorted(shifts):
            if score <= 0:
                continue
            if start is None or last is None or t - last >= 1_000_000_000 or t - start > 5_000_000_000:
                if start is not None:
                    windows.append({"fromT": start, "toT": last, "score": round(total, 6), "toFrame": frame})
                start, total = t, 0.0
            last, frame = t, at
            total += score
        if start is not None:
            windows.append({"fromT": start, "toT": last, "score": round(total, 6), "toFrame": frame})
        return {"max": max((w["score"] for w in windows), default=0.0), "windows": windows}

    def summary(self) -> Dict[str, Any]:
        by_kind = {kind: sum(1 for f in self.flags if f.kind == kind) for kind in KINDS}
        p50, p99 = percentile(self.relayout_ms, 50), percentile(self.relayout_ms, 99)
        # Beside the device's, creased's own relayout latency from the same trace.
        own = [ns / 1000 for ns in self.timeline.relayout_ns]
        own50, own99 = percentile(own, 50), percentile(own, 99)
        return {"frames": self.frames, "flagged": len(self.flags), "byKind": by_kind,
                "relayoutMs": {"p50": None if p50 is None else round(p50, 1), "p99": None if p99 is None else round(p99, 1),
                               "count": len(self.relayout_ms)},
                "creasedRelayoutUs": {"p50": None if own50 is None else round(own50, 1), "p99": None if own99 is None else round(own99, 1),
                                      "count": len(own)},
                "unseen": self.unseen, "superseded": self.superseded, "dropped": self.dropped, "noiseThreshold": self._threshold,
                "layoutShift": {"device": self._windows_of(self._shift), "model": self._windows_of(self._model_shift)}}
