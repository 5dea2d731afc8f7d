"""The model's side of the judge: which layout should be on screen at each moment of a trace.

The layouts come from ``crease replay TRACE --each`` (every layout the daemon published,
by seq); their times and every event's seq from the trace's own records. Standard library
only.
"""

from __future__ import annotations

import bisect
import json
import os
import subprocess
from array import array
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Tuple

from ..tracefile import trace_records
from .boxes import Box, boxes_of, screen_size

__all__ = ["ModelLayout", "Timeline", "TimelineError", "read_timeline", "TRACE_LIMIT"]

#: A trace bigger than this is not judged (a night of 1 kHz ticks is about 100 MB).
TRACE_LIMIT = 1 << 31
#: What ``crease replay`` may take.
REPLAY_TIMEOUT_S = 600.0


class TimelineError(ValueError):
    """The trace cannot be judged against (not a trace, no clock origin, replay failed)."""


@dataclass(frozen=True)
class ModelLayout:
    """A published layout: its seq, its time on the trace's axis (ns), its screen in points
    and its boxes."""

    seq: int
    t: int
    digest: str
    size: Tuple[float, float]
    boxes: Tuple[Box, ...]
    layout: Mapping[str, Any]


@dataclass
class Timeline:
    """The layouts of a trace in time order, and every event's (seq, t)."""

    path: str
    header: Mapping[str, Any]
    layouts: List[ModelLayout]
    event_seqs: "array[int]"
    event_ts: "array[int]"
    #: creased's latency (ns, read to layout queued) of each event that published a layout.
    relayout_ns: "array[int]" = field(default_factory=lambda: array("q"))

    @property
    def origin_ns(self) -> int:
        """The daemon's CLOCK_MONOTONIC at the trace's t = 0."""
        return int(self.header["monotonicOrigin"])

    def __post_init__(self) -> None:
        self._times = [m.t for m in self.layouts]

    def index_at(self, t: int) -> int:
        """The index of the layout on screen at ``t`` (the last published at or before it)."""
        return max(0, bisect.bisect_right(self._times, t) - 1)

    def seq_at(self, t: int) -> int:
        """The seq of the last event at or before ``t`` (0 before the first)."""
        i = bisect.bisect_right(self.event_ts, t) - 1
        return int(self.event_seqs[i]) if i >= 0 else 0



def _published(trace: str, crease: str) -> Dict[int, Mapping[str, Any]]:
    """seq -> layout for every layout ``crease replay --each`` publishes."""
    process = subprocess.Popen([crease, "replay", trace, "--each"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None and process.stderr is not None
    out: Dict[int, Mapping[str, Any]] = {}
    for line in process.stdout:
        if line.strip():
            layout = json.loads(line)
            out[int(layout["seq"])] = layout
    errors = process.stderr.read()
    if process.wait(timeout=REPLAY_TIMEOUT_S) != 0:
        raise TimelineError(f"crease replay {trace} --each failed: {errors.strip()}")
    return out


def read_timeline(trace: "os.PathLike[str] | str", crease: str) -> Timeline:
    """The timeline of ``trace`` (a regular file), its layouts by ``crease`` (the CLI)."""
    path = os.fspath(trace)
    header: Optional[Dict[str, Any]] = None
    seqs: "array[int]" = array("q")
    ts: "array[int]" = array("q")
    latency: Dict[int, int] = {}
    for _, record in trace_records(path, TRACE_LIMIT, TimelineError, "the judge"):
        if header is None:
            header = record
            continue
        if ("event" in record or "load" in record or "gap" in record) and "t" in record:
            seqs.append(int(record["seq"]))
            ts.append(int(record["t"]))
            if isinstance(record.get("latencyNs"), int):
                latency[int(record["seq"])] = int(record["latencyNs"])
    if header is None:
        raise TimelineError(f"{path}: empty, no trace header")
    if not isinstance(header.get("monotonicOrigin"), int):
        raise TimelineError(f"{path}: its header has no monotonicOrigin, so frames cannot be set against it")
    published = _published(path, crease)
    time_of = dict(zip(seqs, ts))
    layouts: List[ModelLayout] = []
    for seq in sorted(published):
        layout = published[seq]
        t = 0 if seq == 0 else time_of.get(seq)
        if t is None:
            continue  # a layout the replay published at a seq the trace has no time for (its start)
        layouts.append(ModelLayout(seq, int(t), str(layout.get("digest")), screen_size(layout), tuple(boxes_of(layout)), layout))
    if not layouts:
        raise TimelineError(f"{path}: the replay published no layout")
    # creased's own latency (read to layout queued) of each event that made a new layout.
    relayout_ns = array("q", (latency[m.seq] for m in layouts if m.seq in latency))
    return Timeline(path=path, header=header, layouts=layouts, event_seqs=seqs, event_ts=ts, relayout_ns=relayout_ns)
