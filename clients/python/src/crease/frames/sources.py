"""Where frames come from: WebDriverAgent's MJPEG stream live, a screen recording, or a
directory of PNGs. Each frame carries its capture time on the trace's ``t`` axis (ns).

- MJPEG: arrival time (CLOCK_MONOTONIC) minus the stream's delay (the rig file's
  ``device.frames.delayMs``, measured by :func:`crease.frames.calibrate_delay`) minus the
  trace's ``monotonicOrigin``; a part that says when it was on screen (the stand-in's
  ``X-Capture-Monotonic-Ns``) is timed by that instead.
- A recording: the stand-in writes the CLOCK_MONOTONIC time its first frame was on screen
  into the MP4's comment; for a phone's recording give when it was started (``start_ns``)
  and the calibrated delay is added. Frame k is ``k / fps`` after the first.
- PNGs: files named ``T.png``, T the time in ns on the trace's axis.

Needs NumPy and Pillow (the ``frames`` extra); recordings need ffmpeg.
"""

from __future__ import annotations

import http.client
import io
import json
import os
import shutil
import stat
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Tuple
from urllib.parse import urlsplit

import numpy as np
from numpy.typing import NDArray
from PIL import Image

from .stream import CAPTURE_HEADER, RECORDING_TAG

__all__ = ["Frame", "FrameSourceError", "mjpeg_frames", "recording_frames", "png_frames", "decode_gray", "describe_recording", "align_recording",
           "MAX_FRAME_BYTES", "MAX_RECORDING_BYTES"]

#: One frame's JPEG or PNG; a larger part is not a frame.
MAX_FRAME_BYTES = 64 << 20
#: A recording's file.
MAX_RECORDING_BYTES = 8 << 30
#: The judge looks at the screen at about this many pixels a point (2 points a pixel).
JUDGE_PPP = 0.5


class FrameSourceError(ValueError):
    """Frames cannot be read from the source (not a recording, a cut stream, bad names)."""


@dataclass
class Frame:
    """One frame: its number in the source, its time on the trace's axis (ns), and either
    its encoded bytes (``data``, decoded by the judge) or its grey pixels at ``ppp`` pixels a
    point (``gray``; ``ppp`` None when the frame is exactly the screen)."""

    index: int
    t: int
    data: Optional[bytes] = None
    gray: Optional[NDArray[Any]] = None
    ppp: Optional[float] = None
    #: The source said when the frame was on screen (the stand-in's header), rather than
    #: the time coming from its arrival.
    exact_time: bool = False
    #: The codec's block in points (its change bleeds that far): 0 for lossless pixels.
    block_pt: float = 0.0


def decode_gray(data: bytes, source_ppp: Optional[float], screen_width_pt: float) -> Tuple[NDArray[Any], float, float]:
    """A JPEG or PNG as grey pixels near :data:`JUDGE_PPP` (a JPEG decoded at 1/2 … 1/8 by its
    DCT, so a phone-sized frame costs little), the pixels a point of the result, and the
    codec's block in points (a JPEG's 8 pixels; 0 for a PNG)."""
    opened = Image.open(io.BytesIO(data))
    width, height = opened.size
    jpeg = opened.format == "JPEG"
    ppp = source_ppp if source_ppp else width / max(1.0, screen_width_pt)
    factor = max(1.0, ppp / JUDGE_PPP)
    if jpeg:
        opened.draft("L", (max(1, int(width / factor)), max(1, int(height / factor))))
    picture = opened.convert("L")
    reduce = int(picture.size[0] / (width / factor))
    if reduce >= 2:
        picture = picture.reduce(reduce)
    return np.asarray(picture, dtype=np.uint8), ppp * picture.size[0] / width, (8 / ppp if jpeg else 0.0)


def _read_line(response: http.client.HTTPResponse) -> bytes:
    line = response.readline(1024)
    if not line:
        raise EOFError
    return line


def mjpeg_frames(url: str, origin_ns: int, delay_ns: int = 0, *, seconds: Optional[float] = None,
                 stop: Optional[threading.Event] = None, timeout: float = 10.0, capture_time: bool = True) -> Iterator[Frame]:
    """The frames of a live MJPEG stream (``multipart/x-mixed-replace``) until ``seconds``
    have passed, ``stop`` is set or the stream ends; a silence of ``timeout`` is an error.
    ``capture_time=False`` times every frame by its arrival, whatever the stream says."""
    parts = urlsplit(url)
    if parts.scheme != "http" or not parts.hostname:
        raise FrameSourceError(f"an MJPEG source is an http:// URL, not {url!r}")
    connection = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=timeout)
    try:
        connection.request("GET", parts.path or "/")
        response = connection.getresponse()
        kind = response.getheader("Content-Type", "")
        if response.status != 200 or "multipart" not in kind:
            raise FrameSourceError(f"{url} answered {response.status} {kind!r}, not an MJPEG stream")
        end = time.monotonic() + seconds if seconds is not None else None
        index = 0
        while (stop is None or not stop.is_set()) and (end is None or time.monotonic() < end):
            headers: Dict[str, str] = {}
            try:
                line = _read_line(response)
                while not line.strip():                       # the blank line after the last part
                    line = _read_line(response)
                if not line.startswith(b"--"):
                    raise FrameSourceError(f"{url}: expected a part boundary, got {line[:40]!r}")
                line = _read_line(response)
                while line.strip():
                    name, _, value = line.decode("latin-1").partition(":")
                    headers[name.strip().lower()] = value.strip()
                    line = _read_line(response)
            except EOFError:
                return
            try:
                length = int(headers.get("content-length", ""))
            except ValueError:
                raise FrameSourceError(f"{url}: a part without a Content-Length") from None
            if not 0 < length <= MAX_FRAME_BYTES:
                raise FrameSourceError(f"{url}: a part of {length} bytes is not a frame")
            data = response.read(length)
            arrived = time.monotonic_ns()
            if len(data) < length:
                return
            captured = headers.get(CAPTURE_HEADER.lower(), "")
            if capture_time and captured.isdigit():
                yield Frame(index=index, t=int(captured) - origin_ns, data=data, exact_time=True)
            else:
                yield Frame(index=index, t=arrived - delay_ns - origin_ns, data=data)
            index += 1
    except (OSError, http.client.HTTPException) as e:
        raise FrameSourceError(f"{url}: {e}") from None
    finally:
        connection.close()


def _regular(path: str, limit: int) -> None:
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise FrameSourceError(f"{path}: not a regular file")
    if st.st_size > limit:
        raise FrameSourceError(f"{path}: {st.st_size} bytes, more than the {limit} read")


def describe_recording(path: str) -> Dict[str, Any]:
    """A recording's width, height, frames a second and the stand-in's comment (if any)."""
    ffprobe = shutil.which("ffprobe")
    if ffprobe is None:
        raise FrameSourceError("reading a recording needs ffmpeg's ffprobe (Debian's ffmpeg package)")
    _regular(path, MAX_RECORDING_BYTES)
    probe = subprocess.run([ffprobe, "-v", "error", "-select_streams", "v:0", "-show_entries",
                            "stream=width,height,avg_frame_rate,r_frame_rate:format_tags=comment", "-of", "json", path],
                           capture_output=True, text=True, timeout=60)
    if probe.returncode != 0:
        raise FrameSourceError(f"{path}: not a recording ffprobe can read: {probe.stderr.strip()}")
    info = json.loads(probe.stdout)
    streams = info.get("streams") or []
    if not streams:
        raise FrameSourceError(f"{path}: no video stream")
    stream = streams[0]
    num, _, den = str(stream.get("avg_frame_rate") or stream.get("r_frame_rate") or "0/1").partition("/")
    fps = float(num) / float(den or 1) if float(den or 1) else 0.0
    comment = str((info.get("format", {}).get("tags") or {}).get("comment", ""))
    tag: Dict[str, Any] = json.loads(comment[len(RECORDING_TAG):]) if comment.startswith(RECORDING_TAG) else {}
    return {"width": int(stream["width"]), "height": int(stream["height"]), "fps": float(tag.get("fps") or fps), "tag": tag}


def align_recording(info: Dict[str, Any], origin_ns: int, delay_ns: int = 0, start_ns: Optional[int] = None) -> Tuple[int, str]:
    """When a recording's first frame was on screen, on the trace's axis, and how that is known."""
    tag = info["tag"]
    if "firstFrameMonotonicNs" in tag:
        return int(tag["firstFrameMonotonicNs"]) - origin_ns, "the first frame's capture time written in the recording"
    if start_ns is not None:
        return start_ns + delay_ns - origin_ns, "the recording's start plus the calibrated delay"
    raise FrameSourceError("when the recording's first frame was captured is unknown: give the recording's start "
                           "(--recording-start, CLOCK_MONOTONIC ns)")


def recording_frames(path: str, info: Dict[str, Any], first_t: int, *, source_ppp: Optional[float] = None) -> Iterator[Frame]:
    """The frames of a screen recording (``info`` from :func:`describe_recording`, its first
    frame at ``first_t``), decoded by ffmpeg to grey near :data:`JUDGE_PPP`."""
    fps = float(info["fps"])
    if not fps > 0:
        raise FrameSourceError(f"{path}: no frame rate")
    ppp = float(info["tag"].get("pixelsPerPoint") or source_ppp or 0) or None
    factor = max(1, int((ppp or 3.0) / JUDGE_PPP))
    width, height = max(2, info["width"] // factor), max(2, info["height"] // factor)
    process = subprocess.Popen([str(shutil.which("ffmpeg")), "-nostdin", "-loglevel", "error", "-i", path,
                                "-vf", f"scale={width}:{height}:flags=area", "-f", "rawvideo", "-pix_fmt", "gray", "-"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert process.stdout is not None
    size = width * height
    index = 0
    try:
        while True:
            raw = process.stdout.read(size)
            if len(raw) < size:
                break
            gray = np.frombuffer(raw, dtype=np.uint8).reshape(height, width)
            # H.264's macroblocks are 16 pixels of the recording.
            yield Frame(index=index, t=first_t + round(index * 1e9 / fps), gray=gray,
                        ppp=None if ppp is None else ppp * width / info["width"], block_pt=16 / (ppp or 3.0))
            index += 1
    finally:
        process.stdout.close()
        process.kill()
        process.wait()


def png_frames(directory: str) -> Iterator[Frame]:
    """``T.png`` files of ``directory`` in time order (T: ns on the trace's axis)."""
    st = os.stat(directory)
    if not stat.S_ISDIR(st.st_mode):
        raise FrameSourceError(f"{directory}: not a directory")
    named: List[Tuple[int, str]] = []
    for name in os.listdir(directory):
        stem, dot, ext = name.rpartition(".")
        if ext.lower() != "png" or not dot:
            continue
        if not stem.lstrip("-").isdigit():
            raise FrameSourceError(f"{directory}/{name}: frames are named T.png, T in ns on the trace's axis")
        named.append((int(stem), name))
    if not named:
        raise FrameSourceError(f"{directory}: no T.png frames")
    for index, (t, name) in enumerate(sorted(named)):
        path = os.path.join(directory, name)
        _regular(path, MAX_FRAME_BYTES)
        with open(path, "rb") as f:
            yield Frame(index=index, t=t, data=f.read())
