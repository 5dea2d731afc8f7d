"""The MJPEG stream's delay: how long after the screen changes its frame arrives here.

:func:`calibrate_delay` makes a known change (the caller's: a fold, the keyboard) several
times and takes the fastest time from the change being done to the first frame that shows
it, by arrival; the device's own fastest relayout counts as delay. :func:`write_delay`
puts it into the rig file as ``device.frames.delayMs``.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
import threading
import time
from typing import Callable, List, Optional

import numpy as np

from .sources import Frame, decode_gray, mjpeg_frames

__all__ = ["calibrate_delay", "write_delay"]


def calibrate_delay(mjpeg_url: str, change: Callable[[], None], *, repeats: int = 5, screen_width_pt: float = 466.0,
                    timeout: float = 5.0, threshold: int = 16) -> float:
    """Milliseconds from ``change()`` returning to the first frame that differs from the
    picture before it, the least of ``repeats`` tries (arrival times only: a capture-time
    header is ignored, since a phone sends none)."""
    if repeats < 1:
        raise ValueError("repeats must be at least 1")
    latest: List[Optional[Frame]] = [None]
    stop = threading.Event()
    arrived = threading.Condition()

    def read() -> None:
        for frame in mjpeg_frames(mjpeg_url, 0, stop=stop, timeout=timeout, capture_time=False):
            with arrived:
                latest[0] = frame
                arrived.notify_all()

    reader = threading.Thread(target=read, name="delay calibration", daemon=True)
    reader.start()
    samples: List[float] = []
    try:
        for _ in range(repeats):
            time.sleep(0.5)                       # a still screen before the change
            with arrived:
                if not arrived.wait_for(lambda: latest[0] is not None, timeout):
                    raise TimeoutError(f"{mjpeg_url}: no frame within {timeout} s")
                before = latest[0]
            assert before is not None and before.data is not None
            still = decode_gray(before.data, None, screen_width_pt)[0]
            change()
            done = time.monotonic_ns()
            deadline = time.monotonic() + timeout
            seen = before.index
            while time.monotonic() < deadline:
                with arrived:
                    arrived.wait_for(lambda: latest[0] is not None and latest[0].index > seen, 0.5)
                    frame = latest[0]
                if frame is None or frame.index <= seen or frame.data is None:
                    continue
                seen = frame.index
                gray = decode_gray(frame.data, None, screen_width_pt)[0]
                if gray.shape != still.shape or int((np.abs(gray.astype(np.int16) - still.astype(np.int16)) > threshold).sum()) >= 4:
                    samples.append(max(0.0, (frame.t - done) / 1e6))
                    break
            else:
                raise TimeoutError(f"{mjpeg_url}: the change did not reach the stream within {timeout} s")
    finally:
        stop.set()
        reader.join(timeout=timeout + 5)
    return round(min(samples), 1)


def write_delay(rig_path: str, delay_ms: float) -> None:
    """Sets ``device.frames.delayMs`` in the rig file, replacing it only if it is a regular
    file (never a symlink, FIFO or device) and through a temporary file beside it."""
    st = os.lstat(rig_path)
    if not stat.S_ISREG(st.st_mode):
        raise ValueError(f"{rig_path}: not a regular file; the delay is written only into one")
    with open(rig_path, encoding="utf-8") as f:
        rig = json.loads(f.read(1 << 20))
    device = rig.setdefault("device", {})
    device.setdefault("frames", {})["delayMs"] = delay_ms
    fd, temporary = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(rig_path)), prefix=".rig-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(rig, out, indent=2)
            out.write("\n")
        os.chmod(temporary, stat.S_IMODE(st.st_mode))
        os.replace(temporary, rig_path)
    except BaseException:
        os.unlink(temporary)
        raise
