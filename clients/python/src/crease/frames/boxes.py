"""What a layout puts on the screen, as boxes: the one description both the stand-in's
screen draws and the judge reads its regions from, so neither needs to recognise an icon.

Standard library only (the judge's arithmetic and the drawing need the ``frames`` extra).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Any, List, Mapping, Optional, Sequence, Tuple

__all__ = ["Box", "boxes_of", "screen_size", "moved_boxes", "picture_key", "CONTROL_KINDS"]

#: The boxes that are controls in the layout-shift sense (bars' items and floating buttons).
CONTROL_KINDS = ("item", "floating")


@dataclass(frozen=True)
class Box:
    """A rectangle in points: what it is (``statusBar``, ``bar``, ``item``, ``floating``,
    ``custom``, ``column``, ``sheet``, ``inspector`` …), its id and its frame."""

    kind: str
    ident: str
    x: float
    y: float
    w: float
    h: float

    def colour(self) -> Tuple[int, int, int]:
        """A colour of its own, the same on every run (from its kind and id, not Python's hash)."""
        if self.kind in ("statusBar", "dynamicIsland"):
            return (16, 16, 16)
        if self.kind == "bar":
            return (200, 204, 212)
        # Dark, so every box stands out from the content (grey 121) and the bars (grey 203) by
        # more than the judge's noise threshold, whichever colour its id draws.
        code = zlib.crc32(f"{self.kind}:{self.ident}".encode())
        return (10 + code % 80, 10 + (code >> 8) % 80, 10 + (code >> 16) % 80)

    def mirrored(self, width: float) -> "Box":
        return Box(self.kind, self.ident, width - self.x - self.w, self.y, self.w, self.h)

    def shifted(self, dx: float, dy: float) -> "Box":
        return Box(self.kind, self.ident, self.x + dx, self.y + dy, self.w, self.h)


def _frame(kind: str, ident: str, frame: Optional[Mapping[str, Any]]) -> Optional[Box]:
    if not isinstance(frame, Mapping):
        return None
    try:
        return Box(kind, ident, float(frame["x"]), float(frame["y"]), float(frame["w"]), float(frame["h"]))
    except (KeyError, TypeError, ValueError):
        return None


def screen_size(layout: Mapping[str, Any]) -> Tuple[float, float]:
    """The screen's width and height in points."""
    device = layout.get("device") or {}
    return float(device.get("width", 0)), float(device.get("height", 0))


def boxes_of(layout: Mapping[str, Any]) -> List[Box]:
    """The boxes in drawing order (later ones on top): columns, custom bars, the sheet and
    the inspector, each bar and its items, the floating buttons, the system's regions."""
    out: List[Box] = []

    def add(box: Optional[Box]) -> None:
        if box is not None:
            out.append(box)

    for i, column in enumerate(layout.get("columns") or []):
        add(_frame("column", str(column.get("id", i)), column.get("frame")))
    for custom in layout.get("custom") or []:
        add(_frame("custom", str(custom.get("id")), custom.get("frame")))
    for kind in ("sheet", "inspector"):
        panel = layout.get(kind)
        if isinstance(panel, Mapping):
            add(_frame(kind, str(panel.get("id", kind)), panel.get("frame")))
    for bar in layout.get("bars") or []:
        add(_frame("bar", str(bar.get("id")), bar.get("frame")))
        for item in bar.get("items") or []:
            add(_frame("item", str(item.get("id")), item.get("frame")))
    for button in layout.get("floating") or []:
        add(_frame("floating", str(button.get("id")), button.get("frame")))
    for region in layout.get("regions") or []:
        add(_frame(str(region.get("kind")), str(region.get("kind")), region.get("frame")))
    return out


def picture_key(layout: Mapping[str, Any]) -> Tuple[Tuple[float, float], Tuple[Box, ...]]:
    """Two layouts with the same key look the same on the stand-in's screen."""
    return screen_size(layout), tuple(boxes_of(layout))


def moved_boxes(old: Sequence[Box], new: Sequence[Box]) -> List[Box]:
    """The boxes that changed between two pictures of one screen size: where they were and
    where they went (a box that appeared, left or moved is in one list or both)."""
    old_set, new_set = set(old), set(new)
    return [b for b in old if b not in new_set] + [b for b in new if b not in old_set]
