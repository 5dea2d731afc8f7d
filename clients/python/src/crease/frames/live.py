"""Watching the live MJPEG stream while a tour or a replay runs, and judging what was seen.

The stream is read on a thread of its own, so each frame is timed when it arrives whatever
the judge is doing; frames that repeat the one before (the same bytes: the screen held
still) are kept as one picture and their times. The pictures go to a temporary file (a real
phone's stream changes every frame: the clock, a spinner; at 60 fps that is hundreds of MB
an hour), so what the recorder holds in memory is one picture and 24 bytes a frame. The
trace is read when the judging starts, after the run, so every layout the run made is in it.
"""

from __future__ import annotations

import os
import tempfile
import threading
from array import array
from dataclasses import dataclass
from typing import Any, Dict, Iterable, Iterator, List, Optional

from ..client import Client
from .judge import Flag, FrameJudge, JudgeOptions
from .sources import Frame, FrameSourceError, mjpeg_frames
from .timeline import Timeline

__all__ = ["FrameRecorder", "Judgement", "judge_frames"]


@dataclass
class Judgement:
    """The flagged frames and the summary line of ``crease-rig frames judge --json``."""

    flags: List[Flag]
    summary: Dict[str, Any]
    #: The seq current at each time, for the layout-shift windows' records.
    timeline: Optional[Timeline] = None

    def lines(self) -> List[Dict[str, Any]]:
        return [f.json() for f in self.flags] + [self.summary]

    def record(self, client: Client) -> int:
        """Writes every flagged frame into ``client``'s creased's trace as a ``frame`` record
        (its ``seq`` the verdict's ``refSeq``, which must be one that creased has applied),
        and each of the device's layout-shift windows as a ``layoutShift`` record (``score``,
        ``fromT`` to ``t``, at the seq current then), so ``crease report`` and ``crease trace
        glitches --layout-shift`` have the device's score beside the model's. Returns how
        many flagged frames it wrote."""
        for flag in self.flags:
            verdict = flag.json()
            verdict["refSeq"] = verdict.pop("seq")
            client.frame(verdict)
        if self.timeline is not None:
            for w in self.summary.get("layoutShift", {}).get("device", {}).get("windows", []):
                client.frame({"kind": "layoutShift", "t": int(w["toT"]), "fromT": int(w["fromT"]), "refSeq": self.timeline.seq_at(int(w["toT"])),
                              "frame": int(w.get("toFrame", 0)), "score": float(w["score"])})
        return len(self.flags)

    @property
    def layout_shift_windows(self) -> int:
        """How many device layout-shift windows :meth:`record` writes."""
        return len(self.summary.get("layoutShift", {}).get("device", {}).get("windows", [])) if self.timeline is not None else 0


def judge_frames(frames: Iterable[Frame], timeline: Timeline, options: JudgeOptions = JudgeOptions(), *,
                 source_ppp: Optional[float] = None, alignment: Optional[Dict[str, Any]] = None) -> Judgement:
    """Every frame of ``frames`` judged against ``timeline``."""
    judge = FrameJudge(timeline, options, source_ppp=source_ppp)
    for frame in frames:
        judge.feed(frame)
    judge.finish()
    summary = judge.summary()
    if alignment is not None:
        summary["alignment"] = alignment
    return Judgement(sorted(judge.flags, key=lambda f: (f.t, f.frame)), summary, timeline)


class FrameRecorder:
    """Reads an MJPEG stream from :meth:`start` to :meth:`stop` (or as a context manager)."""

    def __init__(self, url: str, origin_ns: int, delay_ns: int = 0, *, timeout: float = 10.0,
                 spool_dir: Optional[str] = None) -> None:
        """``spool_dir``: where the pictures' temporary file goes (the system's temporary
        directory by default); it is removed when the recorder is closed or collected."""
        self.url = url
        self.origin_ns = origin_ns
        self.delay_ns = delay_ns
        self.timeout = timeout
        self._spool = tempfile.TemporaryFile(dir=spool_dir, prefix="crease-frames-")
        self._spooled = 0                              # bytes written to the spool
        self._offsets: "array[int]" = array("q")       # per picture: where it starts in the spool
        self._sizes: "array[int]" = array("q")         # and its length
        self._last: Optional[bytes] = None             # the newest picture, to tell a repeat
        self._firsts: "array[int]" = array("q")        # per picture: its first frame's index
        self._times: "array[int]" = array("q")
        #: Frames timed by the stream's own capture header rather than their arrival.
        self.exact = 0
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._lock = threading.Lock()
        self.error: Optional[BaseException] = None

    def start(self) -> "FrameRecorder":
        self._thread = threading.Thread(target=self._read, name="mjpeg reader", daemon=True)
        self._thread.start()
        return self

    def _read(self) -> None:
        try:
            for frame in mjpeg_frames(self.url, self.origin_ns, self.delay_ns, stop=self._stop, timeout=self.timeout):
                assert frame.data is not None
                with self._lock:
                    if self._last != frame.data:
                        self._spool.write(frame.data)
                        self._offsets.append(self._spooled)
                        self._sizes.append(len(frame.data))
                        self._spooled += len(frame.data)
                        self._firsts.append(len(self._times))
                        self._last = frame.data
                    self._times.append(frame.t)
                    self.exact += frame.exact_time
        except (FrameSourceError, OSError) as e:
            if not self._stop.is_set():
                self.error = e

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.timeout + 5)

    def __enter__(self) -> "FrameRecorder":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def close(self) -> None:
        """Stops reading and removes the pictures' temporary file."""
        self.stop()
        self._spool.close()

    @property
    def held_bytes(self) -> int:
        """What the recorder holds in memory for the frames read: the newest picture, and
        per frame its time (per picture its place in the spool and its first frame)."""
        with self._lock:
            return len(self._last or b"") + 8 * len(self._times) + 24 * len(self._offsets)

    @property
    def spooled_bytes(self) -> int:
        """The pictures' bytes written to the temporary file."""
        with self._lock:
            return self._spooled

    @property
    def count(self) -> int:
        with self._lock:
            return len(self._times)

    def alignment(self) -> Dict[str, Any]:
        """How the frames were put on the trace's axis."""
        if self.count and self.exact == self.count:
            return {"how": "the stream's capture time of each frame", "delayMs": 0}
        return {"how": "arrival time minus the rig file's delay", "delayMs": self.delay_ns / 1e6,
                "framesWithCaptureTime": self.exact}

    def frames(self) -> Iterator[Frame]:
        """The frames read so far, in order (each picture read back from the spool once)."""
        with self._lock:
            self._spool.flush()
            offsets, sizes, firsts = array("q", self._offsets), array("q", self._sizes), array("q", self._firsts)
            times = array("q", self._times)
        fd = self._spool.fileno()
        for p in range(len(offsets)):
            data = os.pread(fd, sizes[p], offsets[p])
            end = firsts[p + 1] if p + 1 < len(firsts) else len(times)
            for index in range(firsts[p], end):
                yield Frame(index=index, t=times[index], data=data)
