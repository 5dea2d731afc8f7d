"""Watching the live MJPEG stream while a tour or a replay runs, and judging what was seen.

The stream is read on a thread of its own, so each frame is timed when it arrives whatever
the judge is doing; frames that repeat the one before (the same bytes: the screen held
still) are kept as one picture and their times, so an hour at 60 fps costs a few MB. The
trace is read when the judging starts, after the run, so every layout the run made is in it.
"""

from __future__ import annotations

import threading
from array import array
from dataclasses import dataclass
from typing import Any, Dict, Iterable, Iterator, List, Optional, Tuple

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

    def lines(self) -> List[Dict[str, Any]]:
        return [f.json() for f in self.flags] + [self.summary]

    def record(self, client: Client) -> int:
        """Writes every flagged frame into ``client``'s creased's trace as a ``frame`` record
        (its ``seq`` the verdict's ``refSeq``, which must be one that creased has applied);
        returns how many."""
        for flag in self.flags:
            verdict = flag.json()
            verdict["refSeq"] = verdict.pop("seq")
            client.frame(verdict)
        return len(self.flags)


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
    return Judgement(sorted(judge.flags, key=lambda f: (f.t, f.frame)), summary)


class FrameRecorder:
    """Reads an MJPEG stream from :meth:`start` to :meth:`stop` (or as a context manager)."""

    def __init__(self, url: str, origin_ns: int, delay_ns: int = 0, *, timeout: float = 10.0) -> None:
        self.url = url
        self.origin_ns = origin_ns
        self.delay_ns = delay_ns
        self.timeout = timeout
        self._pictures: List[bytes] = []
        self._runs: List[Tuple[int, int]] = []         # (picture, first frame index)
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
                    if not self._pictures or self._pictures[-1] != frame.data:
                        self._pictures.append(frame.data)
                        self._runs.append((len(self._pictures) - 1, len(self._times)))
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
        """The frames read so far, in order."""
        with self._lock:
            runs, times, pictures = list(self._runs), array("q", self._times), list(self._pictures)
        for r, (picture, first) in enumerate(runs):
            end = runs[r + 1][1] if r + 1 < len(runs) else len(times)
            for index in range(first, end):
                yield Frame(index=index, t=times[index], data=pictures[picture])
