"""``python -m crease.frames.bench [FRAMES]``: what judging costs a frame of a 1320 × 2868
screen (@3x, 440 × 956 pt), every frame a different JPEG (a control moving, the worst case:
each is decoded), on one core. Prints frames a second and ms a frame (BENCHMARKS.md)."""

from __future__ import annotations

import sys
import time
from array import array

from .boxes import Box
from .draw import draw_boxes, jpeg_of
from .judge import FrameJudge
from .sources import Frame
from .timeline import ModelLayout, Timeline

SIZE = (440.0, 956.0)


def main(count: int = 600) -> None:
    bar = Box("bar", "side", 356, 0, 84, 956)
    layout = ModelLayout(0, 0, "bench", SIZE, (bar,), {})
    timeline = Timeline(path="bench", header={"monotonicOrigin": 0}, layouts=[layout],
                        event_seqs=array("q", [0]), event_ts=array("q", [0]))
    pictures = [jpeg_of(draw_boxes(SIZE, (bar, Box("item", "moving", 376, 100 + k % 60, 44, 44)), 3.0), 80) for k in range(60)]
    judge = FrameJudge(timeline)
    start = time.process_time()
    for k in range(count):
        judge.feed(Frame(index=k, t=k * 16_666_667, data=pictures[k % 60]))
    judge.finish()
    spent = time.process_time() - start
    print(f"judged {count} frames of 1320x2868 JPEG (quality 80, each different) in {spent:.2f} s CPU: "
          f"{count / spent:.0f} frames/s, {1000 * spent / count:.2f} ms a frame")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 600)
