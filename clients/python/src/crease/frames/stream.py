"""The stand-in's screen as WebDriverAgent serves a phone's: an MJPEG stream on a port of
its own (``mjpegServerFramerate`` frames a second, up to 60; ``mjpegScalingFactor`` per
cent; ``mjpegServerScreenshotQuality``), and screen recordings (``start_recording_screen``
/ ``stop_recording_screen``: an H.264 MP4 made with ffmpeg at ``videoFps``).

Each frame is the screen at a scheduled tick (``t0 + k / fps``), so a stream and a recording
sample a one-refresh flash alike. A recording carries the CLOCK_MONOTONIC time of its first
frame and its pixels per point in its metadata (``comment``), which the judge lines it up by.
Needs Pillow (the ``frames`` extra) and, for recordings, ffmpeg.
"""

from __future__ import annotations

import io

import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections import OrderedDict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, List, Mapping, Optional, Tuple

from PIL import Image

from ..standin_screen import Picture, StandInScreen
from .draw import draw_boxes, jpeg_of

__all__ = ["ScreenStream", "BOUNDARY", "CAPTURE_HEADER", "RECORDING_TAG", "MAX_RECORDING_S"]

BOUNDARY = "--BoundaryString"
#: A part's header with the CLOCK_MONOTONIC ns its frame was on screen (the stand-in's own).
CAPTURE_HEADER = "X-Capture-Monotonic-Ns"
#: The recording's metadata ``comment`` starts with this, then JSON.
RECORDING_TAG = "crease-frames "
#: Points are drawn this many pixels each at mjpegScalingFactor 100 (a phone's @3x).
SCALE = 3.0
#: A recording longer than this is cut there (Appium's default time limit is 180 s; 30 min max).
MAX_RECORDING_S = 1800.0
#: How far the stream may fall behind its schedule before it skips frames.
BEHIND_NS = 1_000_000_000
#: Pictures and JPEGs kept drawn (a tour shows a few hundred).
CACHE = 128


class _Cache:
    def __init__(self) -> None:
        self._items: "OrderedDict[Any, Any]" = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Any, make: Callable[[], Any]) -> Any:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        value = make()
        with self._lock:
            self._items[key] = value
            while len(self._items) > CACHE:
                self._items.popitem(last=False)
        return value


class ScreenStream:
    """Draws :class:`StandInScreen`'s pictures and serves them; ``settings`` is the
    stand-in's Appium settings (read at every frame, so a change applies at once)."""

    def __init__(self, screen: StandInScreen, settings: Mapping[str, Any], *, host: str = "127.0.0.1", port: int = 0) -> None:
        self.screen = screen
        self.settings = settings
        self._pictures = _Cache()
        self._jpegs = _Cache()
        self._recording: Optional[Tuple[int, float, Mapping[str, Any]]] = None
        self._closing = threading.Event()
        screen.listeners.append(self._prepare)
        stream = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                stream._serve(self)

        self._server = ThreadingHTTPServer((host, port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="mjpeg stand-in", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def close(self) -> None:
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    # -- drawing

    def image(self, picture: Picture, scale: float) -> Image.Image:
        drawn: Image.Image = self._pictures.get((picture, scale), lambda: draw_boxes(picture.size, picture.boxes, scale))
        return drawn

    def jpeg(self, picture: Picture, scale: float, quality: int) -> bytes:
        data: bytes = self._jpegs.get((picture, scale, quality), lambda: jpeg_of(self.image(picture, scale), quality))
        return data

    def png(self, picture: Picture) -> bytes:
        """``picture`` as WebDriverAgent's screenshot gives it: a PNG at the full @3x scale."""
        out = io.BytesIO()
        self.image(picture, SCALE).save(out, format="PNG")
        return out.getvalue()

    def _prepare(self, picture: Picture) -> None:
        self.jpeg(picture, self._scale(), self._quality())

    def _scale(self) -> float:
        return SCALE * self._setting("mjpegScalingFactor", 100, 1, 100) / 100

    def _quality(self) -> int:
        return int(self._setting("mjpegServerScreenshotQuality", 25, 1, 100))

    def _setting(self, name: str, default: float, low: float, high: float) -> float:
        value = self.settings.get(name, default)
        try:
            return min(high, max(low, float(value)))
        except (TypeError, ValueError):
            return default

    # -- the MJPEG stream

    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        for name, value in (("Server", "Crease MJPEG stand-in"), ("Connection", "close"), ("Cache-Control", "no-cache, private"),
                            ("Pragma", "no-cache"), ("Content-Type", f"multipart/x-mixed-replace; boundary={BOUNDARY}")):
            handler.send_header(name, value)
        handler.end_headers()
        start = time.monotonic_ns()
        k = 0
        try:
            while not self._closing.is_set():
                fps = self._setting("mjpegServerFramerate", 10, 1, 60)
                scale, quality = self._scale(), self._quality()
                period = int(1e9 / fps)
                tick = start + k * period
                now = time.monotonic_ns()
                if now < tick:
                    time.sleep((tick - now) / 1e9)
                elif now - tick > BEHIND_NS:
                    # Far behind (a reader that stopped reading): skip to now. A shorter lag
                    # (a loaded machine) is caught up frame by frame, each with its capture
                    # time, so the stream never loses the one refresh a flash lasts.
                    k = (now - start) // period
                    tick = start + k * period
                data = self.jpeg(self.screen.picture_at(tick), scale, quality)
                # WebDriverAgent's parts carry no time; the stand-in says when its frame was on
                # screen (CAPTURE_HEADER), which the judge prefers to the arrival time.
                handler.wfile.write(f"{BOUNDARY}\r\nContent-Type: image/jpeg\r\nContent-Length: {len(data)}\r\n"
                                    f"{CAPTURE_HEADER}: {tick}\r\n\r\n".encode() + data + b"\r\n")
                handler.wfile.flush()
                k += 1
        except (BrokenPipeError, ConnectionResetError, socket.timeout, OSError):
            return

    # -- recordings

    def start_recording(self, options: Mapping[str, Any]) -> None:
        """Starts (or restarts, as Appium does) a recording of what the screen shows from now."""
        fps = float(options.get("videoFps", 10) or 10)
        if not 1 <= fps <= 60:
            raise ValueError(f"videoFps is {fps}; the stand-in records 1 to 60 frames a second")
        self._recording = (time.monotonic_ns(), fps, dict(options))

    def stop_recording(self) -> bytes:
        """The recording since :meth:`start_recording` as MP4 bytes (empty when none ran)."""
        if self._recording is None:
            return b""
        start, fps, options = self._recording
        self._recording = None
        limit = min(float(options.get("timeLimit", MAX_RECORDING_S) or MAX_RECORDING_S), MAX_RECORDING_S)
        end = min(time.monotonic_ns(), start + int(limit * 1e9))
        period = 1e9 / fps
        ticks = [start + round(k * period) for k in range(max(1, int((end - start) / period)))]
        return encode_recording([self.screen.picture_at(t) for t in ticks], fps, start, self.image)


def encode_recording(pictures: List[Picture], fps: float, first_ns: int, image: Callable[[Picture, float], Image.Image],
                     scale: float = 1.0) -> bytes:
    """``pictures`` (one a frame) as an H.264 MP4 at ``fps``, each drawn at ``scale`` pixels a
    point top-left on a canvas as large as the largest screen among them (a fold changes the
    display mid-recording); the metadata comment says when its first frame was on screen."""
    ffmpeg = shutil.which("ffmpeg")
    if ffmpeg is None:
        raise RuntimeError("screen recordings need ffmpeg (Debian's ffmpeg package; scripts/setup installs it)")
    width = max(round(p.size[0] * scale) for p in pictures)
    height = max(round(p.size[1] * scale) for p in pictures)
    width, height = width + width % 2, height + height % 2
    comment = RECORDING_TAG + json.dumps({"firstFrameMonotonicNs": first_ns, "pixelsPerPoint": scale, "fps": fps})
    with tempfile.TemporaryDirectory(prefix="crease-recording-") as work:
        out = os.path.join(work, "screen.mp4")
        command = [ffmpeg, "-nostdin", "-loglevel", "error", "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{width}x{height}",
                   "-framerate", repr(fps), "-i", "-", "-c:v", "libx264", "-preset", "ultrafast", "-crf", "12",
                   "-pix_fmt", "yuv420p", "-metadata", f"comment={comment}", "-movflags", "+faststart", out]
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stderr=subprocess.PIPE)
        assert process.stdin is not None
        canvases: "OrderedDict[Picture, bytes]" = OrderedDict()
        try:
            for picture in pictures:
                raw = canvases.get(picture)
                if raw is None:
                    canvas = Image.new("RGB", (width, height), (0, 0, 0))
                    canvas.paste(image(picture, scale), (0, 0))
                    raw = canvas.tobytes()
                    canvases[picture] = raw
                    while len(canvases) > 16:
                        canvases.popitem(last=False)
                process.stdin.write(raw)
            process.stdin.close()
        except BrokenPipeError:
            pass
        errors = process.stderr.read().decode(errors="replace") if process.stderr else ""
        if process.wait() != 0:
            raise RuntimeError(f"ffmpeg could not encode the recording: {errors.strip()}")
        with open(out, "rb") as f:
            return f.read()
