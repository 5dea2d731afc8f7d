"""A layout drawn as the stand-in device's screen shows it: the content a flat grey, every
box of :func:`crease.frames.boxes.boxes_of` a filled rectangle of its own colour. Needs
Pillow (the ``frames`` extra)."""

from __future__ import annotations

import io
from typing import Iterable, Tuple

from PIL import Image, ImageDraw

from .boxes import Box

__all__ = ["draw_boxes", "jpeg_of", "CONTENT"]

#: The app's content behind the bars.
CONTENT = (118, 122, 128)


def draw_boxes(size: Tuple[float, float], boxes: Iterable[Box], scale: float) -> Image.Image:
    """The picture of ``boxes`` on a screen of ``size`` points, ``scale`` pixels a point."""
    width, height = max(1, round(size[0] * scale)), max(1, round(size[1] * scale))
    picture = Image.new("RGB", (width, height), CONTENT)
    pen = ImageDraw.Draw(picture)
    for box in boxes:
        x0, y0 = round(box.x * scale), round(box.y * scale)
        x1, y1 = round((box.x + box.w) * scale) - 1, round((box.y + box.h) * scale) - 1
        if x1 >= x0 and y1 >= y0:
            pen.rectangle((x0, y0, x1, y1), fill=box.colour())
    return picture


def jpeg_of(picture: Image.Image, quality: int) -> bytes:
    out = io.BytesIO()
    picture.save(out, format="JPEG", quality=max(1, min(100, quality)))
    return out.getvalue()
