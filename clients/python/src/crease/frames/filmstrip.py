"""Pictures of flagged frames for a ticket: for each, the frame before, the flagged frame
(outlined in red), the frame after, and the picture the model expected then (its boxes
drawn as the stand-in draws them), side by side in one PNG named ``FRAME-KIND.png``."""

from __future__ import annotations

import io
import os
import stat
import tempfile
from typing import Any, Dict, Iterable, List, Set

import numpy as np
from PIL import Image, ImageDraw

from .draw import draw_boxes
from .judge import Flag
from .sources import Frame
from .timeline import Timeline

__all__ = ["write_filmstrips"]

#: Strips drawn at most (a run with thousands of flags gets the first ones).
MAX_STRIPS = 200


def _picture(frame: Frame) -> Image.Image:
    if frame.gray is not None:
        return Image.fromarray(np.asarray(frame.gray, dtype=np.uint8)).convert("RGB")
    assert frame.data is not None
    return Image.open(io.BytesIO(frame.data)).convert("RGB")


def _write_png(picture: Image.Image, path: str) -> None:
    """Through a temporary file beside it; an existing non-regular file is never replaced."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        pass
    else:
        if not stat.S_ISREG(st.st_mode):
            raise ValueError(f"{path} exists and is not a regular file; not replaced")
    fd, temporary = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".strip-", suffix=".png")
    try:
        with os.fdopen(fd, "wb") as out:
            picture.save(out, format="PNG")
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def write_filmstrips(frames: Iterable[Frame], flags: List[Flag], timeline: Timeline, directory: str) -> List[str]:
    """Writes a strip for each of ``flags`` (the first :data:`MAX_STRIPS`) into ``directory``
    (made if missing) from a second pass over the source's ``frames``; returns the paths."""
    if os.path.lexists(directory) and not os.path.isdir(directory):
        raise ValueError(f"{directory} exists and is not a directory")
    os.makedirs(directory, exist_ok=True)
    wanted = flags[:MAX_STRIPS]
    needed: Set[int] = {f.frame + d for f in wanted for d in (-1, 0, 1)}
    kept: Dict[int, Frame] = {}
    for frame in frames:
        if frame.index in needed:
            kept[frame.index] = frame
        if frame.index > max(needed, default=-1):
            break
    written: List[str] = []
    for flag in wanted:
        layout = timeline.layouts[timeline.index_at(flag.t)]
        shown = [kept.get(flag.frame + d) for d in (-1, 0, 1)]
        pictures = [None if f is None else _picture(f) for f in shown]
        height = max((p.size[1] for p in pictures if p is not None), default=1)
        scale = height / max(1.0, layout.size[1])
        expected = draw_boxes(layout.size, layout.boxes, scale)
        row: List[Any] = pictures + [expected]
        width = sum((p.size[0] if p is not None else expected.size[0]) for p in row) + 8 * (len(row) + 1)
        strip = Image.new("RGB", (width, height + 16), (255, 255, 255))
        pen = ImageDraw.Draw(strip)
        x = 8
        for i, p in enumerate(row):
            w = p.size[0] if p is not None else expected.size[0]
            if p is not None:
                strip.paste(p, (x, 8))
            if i == 1:
                pen.rectangle((x - 4, 4, x + w + 3, height + 11), outline=(220, 0, 0), width=3)
            x += w + 8
        path = os.path.join(directory, f"{flag.frame}-{flag.kind}.png")
        _write_png(strip, path)
        written.append(path)
    return written
