"""A WebDriverAgent stand-in on localhost, for trying a rig script without a phone.

It is a test device, not a simulator of iOS. It speaks the endpoints :class:`crease.rig.Rig`
and :class:`crease.appium.DuoRig` use: a session, the page source, ``mobile:
setSimulatedHingeAngle`` / ``getSimulatedHingeAngle`` / ``listDisplays``, the orientation
and the rotation (all four upright orientations), the settings, elements found by
accessibility id and tapped (a tab's id selects it, a screen's id pushes it, a sheet's id
presents it, ``BackButton`` pops, ``Dismiss`` dismisses, ``Inspector`` toggles the
inspector, the text field's id shows the keyboard), ``mobile: hideKeyboard`` /
``isKeyboardShown``, ``mobile: deepLink`` (``crease-standin://EVENT?FIELD=VALUE`` makes
that event, for what only the app under test can do), and ``mobile: terminateApp`` /
``activateApp`` / ``launchApp`` (a relaunch starts the app's screens afresh). It plays the device with a creased of its own (``device``):
folding and turning it are events to that daemon, and its page source is that daemon's
layout written in WebDriverAgent's XML format. So a verdict of ``match`` says the rig's
creased and the "device" agree; the faults it can inject (``misplace``, ``delay``,
``during_capture``, ``short``), always or intermittently (``intermittent``: each with a
probability, drawn at each layout change from a seeded generator), or after a fast fold
(``when_fast``: while the last hinge move was faster than a rate), are what a real device,
an actuator and a slow page source do.

It is a stand-in, not a simulator: it knows nothing of iOS beyond Crease's own model.
"""

from __future__ import annotations

import base64
import json
import random
import threading
import time
import uuid
from urllib.parse import parse_qsl, urlsplit
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple
from xml.sax.saxutils import quoteattr

from .client import Client, CreaseError, JSONObject, trace_monotonic_origin
from .standin_screen import StandInScreen

__all__ = ["StandInWDA", "page_source_of", "ROTATIONS", "DEEP_LINK_SCHEME"]

#: The W3C rotation's z angle of each device orientation (our reading of WebDriverAgent's
#: table; a lab whose phone turns otherwise says so in the rig file's device.rotations).
ROTATIONS = {"portrait": 0, "landscapeRight": 90, "portraitUpsideDown": 180, "landscapeLeft": 270}
DEEP_LINK_SCHEME = "crease-standin"

# Our assumptions of how the system names its controls, as crease.appium.TreeMapping reads them.
SYSTEM_NAMES = {"system.back": "BackButton", "system.overflow": "More", "system.tabs": "TabsMenu"}
BAR_TYPES = {"navigation": "XCUIElementTypeNavigationBar", "tabBar": "XCUIElementTypeTabBar",
             # UIKit's sidebar is a list: a collection view of cells, not a bar.
             "sidebar": "XCUIElementTypeCollectionView"}
DISPLAYS = [{"id": 1, "name": "outer", "isMain": True}, {"id": 2, "name": "inner", "isMain": False}]


def _n(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _element(kind: str, attributes: Mapping[str, Any], frame: Mapping[str, float], index: int, children: str = "") -> str:
    attrs = "".join(f" {k}={quoteattr(str(v))}" for k, v in attributes.items() if v is not None)
    geometry = (f' x="{_n(frame["x"])}" y="{_n(frame["y"])}" width="{_n(frame["w"])}" height="{_n(frame["h"])}"'
                f' index="{index}"')
    if children:
        return f'<{kind} type="{kind}"{attrs} enabled="true" visible="true"{geometry}>{children}</{kind}>'
    return f'<{kind} type="{kind}"{attrs} enabled="true" visible="true"{geometry}/>'


def page_source_of(layout: Mapping[str, Any], app_name: str = "App", misplace: Optional[Mapping[str, float]] = None) -> str:
    """A layout as WebDriverAgent's page source would show it: each bar an element of its
    bar type (the side column and toolbars as ``XCUIElementTypeToolbar``, a sidebar as the
    ``XCUIElementTypeCollectionView`` of ``XCUIElementTypeCell`` rows UIKit makes it), each
    other control a ``XCUIElementTypeButton`` named by its id (the system's own by their system names), its
    badge as its ``value``. ``misplace`` moves controls down by that many points."""
    device = layout["device"]
    screen = {"x": 0, "y": 0, "w": device["width"], "h": device["height"]}
    bars: List[str] = []
    for b, bar in enumerate(layout.get("bars", [])):
        controls: List[str] = []
        for i, item in enumerate(bar.get("items", [])):
            frame = dict(item["frame"])
            frame["y"] += (misplace or {}).get(item["id"], 0)
            name = SYSTEM_NAMES.get(item["id"], item["id"])
            badge = item.get("badge")
            control = "XCUIElementTypeCell" if bar["role"] == "sidebar" else "XCUIElementTypeButton"
            controls.append(_element(control, {"name": name, "label": name, "value": badge, "accessible": "true"}, frame, i))
        kind = BAR_TYPES.get(bar["role"], "XCUIElementTypeToolbar")
        bars.append(_element(kind, {"name": bar["id"], "accessible": "false"}, bar["frame"], b, "".join(controls)))
    window = _element("XCUIElementTypeWindow", {"accessible": "false"}, screen, 0, "".join(bars))
    application = _element("XCUIElementTypeApplication", {"name": app_name, "label": app_name, "accessible": "false"}, screen, 0, window)
    return f'<?xml version="1.0" encoding="UTF-8"?><AppiumAUT>{application}</AppiumAUT>'


def _trace_origin(device: Client) -> Optional[int]:
    """The device daemon's trace ``monotonicOrigin`` (None when it records no trace)."""
    trace = device.stats().get("trace") or {}
    path = trace.get("file") if isinstance(trace, dict) else None
    if not path:
        return None
    try:
        return trace_monotonic_origin(path)
    except (OSError, ValueError):
        return None


class StandInWDA:
    """Serves the stand-in on ``127.0.0.1`` (``url``); use as a context manager or call
    :meth:`close`. ``device`` is a client of the creased that plays the device."""

    def __init__(self, device: Client, *, host: str = "127.0.0.1", port: int = 0, mjpeg_port: Optional[int] = 0) -> None:
        self.device = device
        # The screen: what it shows when (the frame faults live there). Its times go on the
        # device daemon's trace axis when that daemon records one.
        self.screen = StandInScreen(device.layout(), int(device.hello().get("seq", 0)), origin_ns=_trace_origin(device))
        # Faults: seconds a page source takes after the screen is read; points a control is
        # shown too low; a function run while a page source is being read (the world moves on).
        self.delay = 0.0
        self.misplace: Dict[str, float] = {}
        # Degrees the hinge lands short of where it was sent (an actuator that stops early).
        self.short = 0.0
        # Faults that come and go: (probability, kind, arguments), kind misplace (item, dy),
        # lag (seconds) or short (degrees); drawn afresh, seeded, at each layout change.
        self.intermittent: List[Tuple[float, str, Tuple[Any, ...]]] = []
        self.random = random.Random(0)
        self._drawn_for: Optional[str] = None
        self._active: List[Tuple[str, Tuple[Any, ...]]] = []
        # Faults that hold after a fast fold: (degrees per second, kind, arguments), while the
        # last hinge move was faster than that (a device that lags behind a quick fold).
        self.when_fast: List[Tuple[float, str, Tuple[Any, ...]]] = []
        self._last_fold: Optional[Tuple[float, float]] = None   # (angle, time.monotonic())
        self._fold_rate = 0.0
        self.text_field = "searchField"
        self.during_capture: Optional[Callable[[], None]] = None
        self.settings: JSONObject = {"currentDisplayId": None}
        self.requests: List[str] = []
        self._orientation = "PORTRAIT"
        self._lock = threading.Lock()
        self._session = uuid.uuid4().hex
        self._terminated = False
        self._app = device.hello().get("app", "App")
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _body(self) -> Any:
                length = int(self.headers.get("Content-Length") or 0)
                data = self.rfile.read(length) if length else b""
                return json.loads(data) if data else {}

            def _answer(self, status: int, value: Any) -> None:
                data = json.dumps({"value": value, "sessionId": stand_in._session}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._answer(*stand_in._dispatch("GET", self.path, None))

            def do_POST(self) -> None:
                # A body that is not JSON (or not an object) is the client's error, answered as
                # WebDriver answers it, not a dropped connection.
                try:
                    body = self._body()
                except (ValueError, UnicodeDecodeError) as e:
                    self._answer(400, {"error": "invalid argument", "message": f"the request body is not JSON: {e}"})
                    return
                if not isinstance(body, dict):
                    self._answer(400, {"error": "invalid argument", "message": "the request body must be a JSON object"})
                    return
                self._answer(*stand_in._dispatch("POST", self.path, body))

            def do_DELETE(self) -> None:
                self._answer(*stand_in._dispatch("DELETE", self.path, None))

        self._server = ThreadingHTTPServer((host, port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="wda stand-in", daemon=True)
        self._thread.start()
        # The MJPEG stream and recordings need Pillow (crease[frames]); without it the
        # stand-in serves everything else and says so when asked for a recording.
        self.stream: Any = None
        if mjpeg_port is not None:
            try:
                from .frames.stream import ScreenStream
            except ImportError:
                pass
            else:
                self.stream = ScreenStream(self.screen, self.settings, host=host, port=mjpeg_port)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def mjpeg_url(self) -> Optional[str]:
        """The MJPEG stream's URL (None without Pillow)."""
        return None if self.stream is None else str(self.stream.url)

    def close(self) -> None:
        if self.stream is not None:
            self.stream.close()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def __enter__(self) -> "StandInWDA":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the device

    def seed(self, seed: int) -> None:
        """Seeds the draws of the intermittent faults (the same seed, the same faults)."""
        self.random.seed(seed)

    def _draw_if_changed(self, digest: Optional[str]) -> None:
        """At each layout change, which intermittent faults hold until the next one."""
        if digest == self._drawn_for:
            return
        self._drawn_for = digest
        self._active = [(kind, args) for p, kind, args in self.intermittent if self.random.random() < p]

    def _faults(self, kind: str) -> List[Tuple[Any, ...]]:
        return ([args for k, args in self._active if k == kind]
                + [args for rate, k, args in self.when_fast if k == kind and self._fold_rate > rate])

    def _note_fold(self, angle: float) -> None:
        """How fast the hinge moved to ``angle`` since the last move (degrees per second)."""
        now = time.monotonic()
        if self._last_fold is not None:
            moved, took = abs(angle - self._last_fold[0]), now - self._last_fold[1]
            self._fold_rate = moved / took if took > 0 else float("inf")
        self._last_fold = (angle, now)

    def page_source(self) -> str:
        """Reads the screen (the layout it shows now), then takes ``delay`` to deliver it."""
        with self._lock:
            # A change made to the device daemon behind the stand-in's back (a test's own
            # client) reaches the screen when it is next read.
            current = self.device.layout()
            self.screen.published(current, int(current.get("seq", 0)))
            layout = dict(self.screen.layout_at())
            self._draw_if_changed(layout.get("digest"))
            misplace = dict(self.misplace)
            for item, dy in self._faults("misplace"):
                misplace[item] = misplace.get(item, 0) + dy
            delay = self.delay + sum(args[0] for args in self._faults("lag"))
        if self.during_capture is not None:
            self.during_capture()
        if delay > 0:
            time.sleep(delay)
        return page_source_of(layout, self._app, misplace)

    def _execute(self, script: str, args: List[Any]) -> Any:
        options = args[0] if args and isinstance(args[0], dict) else {}
        with self._lock:
            if script == "mobile: setSimulatedHingeAngle":
                angle = float(options["angle"])
                if not 0 <= angle <= 180:
                    raise ValueError("angle must be between 0 and 180 degrees")
                self._note_fold(angle)
                short = self.short + sum(args[0] for args in self._faults("short"))
                reply = self._shown(self.device.hinge(max(0.0, angle - short) if angle > 0 else angle))
                self.screen.folded(int(reply.get("seq", 0)), bool(reply.get("changed")))
                return None
            if script == "mobile: getSimulatedHingeAngle":
                return float(self.device.state()["state"]["hingeAngle"])
            if script == "mobile: listDisplays":
                return DISPLAYS
            if script == "mobile: hideKeyboard":
                self._event({"event": "keyboard", "visible": False})
                return None
            if script == "mobile: isKeyboardShown":
                return bool(self.device.state()["state"]["keyboard"]["visible"])
            if script == "mobile: deepLink":
                self._deep_link(str(options.get("url", "")))
                return None
            if script in ("mobile: terminateApp", "mobile: activateApp", "mobile: launchApp"):
                if script != "mobile: activateApp" or self._terminated:
                    self._relaunch(terminate=script == "mobile: terminateApp")
                return None
        raise KeyError(script)

    def _shown(self, reply: JSONObject) -> JSONObject:
        """After a change reached the device daemon: its new layout goes to the screen."""
        if reply.get("changed"):
            self.screen.published(self.device.layout(), int(reply.get("seq", 0)))
        return reply

    def _event(self, event: JSONObject) -> JSONObject:
        try:
            return self._shown(self.device.send(event))
        except CreaseError as e:
            raise ValueError(f"the stand-in app could not do {event}: {e}") from None

    def _accepted(self, event: JSONObject) -> bool:
        try:
            self._shown(self.device.send(event))
        except CreaseError:
            return False
        return True

    def _deep_link(self, url: str) -> None:
        """``crease-standin://pip?active=true``: the event ``pip`` with ``active`` true."""
        parsed = urlsplit(url)
        if parsed.scheme != DEEP_LINK_SCHEME or not parsed.netloc:
            raise ValueError(f"the stand-in opens {DEEP_LINK_SCHEME}://EVENT?FIELD=VALUE links, not {url!r}")
        event: JSONObject = {"event": parsed.netloc}
        for key, value in parse_qsl(parsed.query):
            event[key] = json.loads(value) if value in ("true", "false") or value.lstrip("-").isdigit() else value
        self._event(event)

    def _relaunch(self, terminate: bool) -> None:
        """Terminating ends the app (its screens start afresh when it is next activated);
        the device keeps its fold, orientation and settings, the keyboard goes away."""
        self._terminated = terminate
        if not terminate:
            now = self.device.state()["state"]
            now["ui"] = {"selectedTabs": [], "stacks": [], "sheet": None, "inspectors": []}
            now["keyboard"] = {"visible": False, "height": None}
            self._shown(self.device.load(now))

    def _tap(self, ident: str) -> None:
        """A tap on the control named ``ident``: what it does in the stand-in app."""
        if self._terminated:
            raise ValueError("the app is not running (mobile: activateApp starts it)")
        if ident == self.text_field:
            self._event({"event": "keyboard", "visible": True})
            return
        fixed = {"BackButton": {"event": "pop"}, "Dismiss": {"event": "dismiss"}}
        if ident in fixed:
            self._event(fixed[ident])
            return
        if ident == "Inspector":
            shown = any(self.device.state()["state"]["ui"].get("inspectors") or [])
            self._event({"event": "inspector", "presented": not shown})
            return
        for event in ({"event": "select", "tab": ident}, {"event": "push", "screen": ident}, {"event": "present", "sheet": ident}):
            if self._accepted(event):
                return
        raise LookupError(ident)

    def _recorder(self) -> Any:
        if self.stream is None:
            raise KeyError("screen recording (the stand-in needs Pillow: pip install 'crease[frames]')")
        return self.stream

    def _device_orientation(self) -> str:
        return str(self.device.state()["state"].get("deviceOrientation") or "portrait")

    def _rotate_to(self, z: int) -> None:
        names = {v: k for k, v in ROTATIONS.items()}
        if z not in names:
            raise ValueError(f"the stand-in turns to z = {', '.join(str(k) for k in names)}, not {z}")
        with self._lock:
            self._shown(self.device.send({"event": "orientation", "value": names[z], "convention": "device"}))
        self._orientation = "PORTRAIT" if names[z].startswith("portrait") else "LANDSCAPE"

    def tilt(self, gravity: List[float]) -> None:
        """The stand-in's tilt stage (no WebDriverAgent endpoint: a lab's gimbal is not the
        phone's): the phone turned until its IMU reads ``gravity``, which its device daemon
        takes as a ``motion`` sample at its own read time, as an IMU's would be."""
        if len(gravity) != 3 or not all(isinstance(g, (int, float)) and not isinstance(g, bool) for g in gravity):
            raise ValueError(f"a tilt is a gravity [x, y, z] in g, not {gravity!r}")
        with self._lock:
            self._shown(self.device.send({"event": "motion", "gravity": [float(g) for g in gravity]}))

    def tilt_hook(self) -> Callable[[JSONObject], None]:
        """The hook a :class:`crease.rig.Rig` takes for ``motion`` (``hooks={"motion": ...}``):
        each tour sample tilts this stand-in; ``POST /standin/tilt {"gravity": [x, y, z]}``
        does the same from another process."""
        return lambda event: self.tilt(list(event["gravity"]))

    def _rotate(self, name: str) -> None:
        # WebDriverAgent's LANDSCAPE is UIDeviceOrientationLandscapeLeft.
        device = {"PORTRAIT": "portrait", "LANDSCAPE": "landscapeLeft"}[name]
        with self._lock:
            self._shown(self.device.send({"event": "orientation", "value": device, "convention": "device"}))
        self._orientation = name

    def _dispatch(self, method: str, raw_path: str, body: Any) -> Tuple[int, Any]:
        """The status and `value` of one request."""
        path = raw_path.split("?")[0].rstrip("/")
        self.requests.append(f"{method} {path}")
        parts = path.strip("/").split("/")
        try:
            if method == "GET" and path == "/status":
                return (200, {"ready": True, "message": "Crease WebDriverAgent stand-in", "mjpegUrl": self.mjpeg_url})
            if method == "GET" and path == "/standin/faults":
                return (200, self.screen.faults())
            if method == "POST" and path == "/standin/tilt":
                self.tilt(list((body or {}).get("gravity") or []))
                return (200, None)
            if method == "POST" and path == "/session":
                caps = (body.get("capabilities") or {}).get("alwaysMatch") or {}
                return (200, {"sessionId": self._session, "capabilities": {**caps, "platformName": "iOS"}})
            if len(parts) < 2 or parts[0] != "session" or parts[1] != self._session:
                return (404, {"error": "invalid session id", "message": f"no session at {path}"})
            rest = "/".join(parts[2:])
            if method == "DELETE" and rest == "":
                return (200, None)
            if method == "GET" and rest == "source":
                return (200, self.page_source())
            if method == "POST" and rest == "execute/sync":
                return (200, self._execute(body.get("script", ""), body.get("args") or []))
            if rest == "appium/settings":
                if method == "POST":
                    self.settings.update(body.get("settings") or {})
                    return (200, None)
                return (200, self.settings)
            if rest == "orientation":
                if method == "POST":
                    self._rotate(str(body.get("orientation", "")).upper())
                    return (200, None)
                return (200, self._orientation)
            if rest == "rotation":
                if method == "POST":
                    self._rotate_to(int(body.get("z", 0)))
                    return (200, None)
                return (200, {"x": 0, "y": 0, "z": ROTATIONS[self._device_orientation()]})
            if method == "POST" and rest == "element":
                if body.get("using") not in ("accessibility id", "id", "name"):
                    return (400, {"error": "invalid argument", "message": "the stand-in finds elements by accessibility id"})
                ident = str(body.get("value", ""))
                return (200, {"ELEMENT": ident, "element-6066-11e4-a52e-4f735466cecf": ident})
            if method == "POST" and len(parts) == 5 and parts[2] == "element" and parts[4] == "click":
                try:
                    with self._lock:
                        self._tap(parts[3])
                except LookupError:
                    return (404, {"error": "no such element", "message": f"no control {parts[3]!r} can be tapped now"})
                return (200, None)
            if method == "GET" and rest == "screenshot":
                # What is on screen now, faults and all, as a PNG in base64 (WebDriverAgent's answer).
                picture = self.screen.picture_at(time.monotonic_ns())
                return (200, base64.b64encode(self._recorder().png(picture)).decode("ascii"))
            if method == "POST" and rest == "appium/start_recording_screen":
                self._recorder().start_recording((body.get("options") or {}))
                return (200, None)
            if method == "POST" and rest == "appium/stop_recording_screen":
                return (200, base64.b64encode(self._recorder().stop_recording()).decode("ascii"))
            if method == "GET" and rest == "appium/device/is_keyboard_shown":
                return (200, self._execute("mobile: isKeyboardShown", []))
            if rest == "wda/device/hingeAngle":
                if method == "POST":
                    return (200, self._execute("mobile: setSimulatedHingeAngle", [body]))
                return (200, self._execute("mobile: getSimulatedHingeAngle", []))
            return (404, {"error": "unknown command", "message": f"the stand-in does not serve {method} {path}"})
        except KeyError as e:
            return (404, {"error": "unknown command", "message": f"the stand-in does not support {e}"})
        except LookupError as e:
            return (404, {"error": "no such element", "message": str(e)})
        except (ValueError, TypeError) as e:
            return (400, {"error": "invalid argument", "message": str(e)})
        except Exception as e:  # a stand-in answers every request: a fault of its own is a 500, not a dropped connection
            return (500, {"error": "unknown error", "message": f"{type(e).__name__}: {e}"})
