"""The rig: any Crease event done to a phone through Appium, then told to creased as the
device reports it; a tour run step by step with a checkpoint after every look
(docs/rig.md).

Standard library only: the driver is the caller's (Appium-Python-Client's
``webdriver.Remote``), the rig file is :func:`crease.rigfile.load_rig_file`'s.

One actuator per event kind, each through what Appium and WebDriverAgent offer:

- ``hinge``: the rig's motor (``fold``), else ``mobile: setSimulatedHingeAngle``; read
  back with ``mobile: getSimulatedHingeAngle`` and sent as read.
- ``orientation`` (device orientations): the W3C rotation (``POST …/rotation``, z by
  ``device.rotations`` of the rig file); read back and sent as read.
- ``keyboard``: a tap on the text field (``device.textField``, default ``searchField``)
  or ``mobile: hideKeyboard``; read back with ``mobile: isKeyboardShown``.
- ``select`` / ``push`` / ``present``: a tap on the tab's, screen's or sheet's
  accessibility id (through ``device.ids``, the app's identifiers by manifest id);
  ``pop`` taps ``BackButton``, ``dismiss`` taps ``Dismiss``, ``inspector`` taps ``Inspector``.
- ``pip``, ``liveActivities``, ``splitView``, ``layoutDirection``, ``reduceTransparency``:
  what only the app under test can do: a hook the lab registers by event kind, else
  ``mobile: deepLink`` to ``device.deepLinks[kind]`` (``{field}`` filled from the event),
  else the stand-in's ``crease-standin://KIND?FIELD=VALUE``.

A move the rig file says the rig cannot make raises :class:`RigError` before anything is done.
"""

from __future__ import annotations

import json
import os
import stat
import time
import urllib.request
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from .appium import PageSourceReading, TreeMapping, look, read_page_source, settle
from .client import Client, JSONObject
from .rigfile import RigFile

if TYPE_CHECKING:
    from .frames.live import FrameRecorder
    from .reproduce import RecordedTrace, ReplayResult, Reproduction, Target

__all__ = ["Rig", "RigError", "RunResult", "DEFAULT_ROTATIONS", "read_tour", "read_plan", "read_steps"]

#: The W3C rotation's z of each device orientation (as the stand-in takes it).
DEFAULT_ROTATIONS: Mapping[str, int] = {"portrait": 0, "landscapeRight": 90, "portraitUpsideDown": 180, "landscapeLeft": 270}
APP_ONLY = ("pip", "liveActivities", "splitView", "layoutDirection", "reduceTransparency")


class RigError(RuntimeError):
    """The rig could not do an event, or the device is not where the event should have
    left it; ``event`` is the event, ``shown`` what the device reported."""

    def __init__(self, message: str, event: Optional[Mapping[str, Any]] = None, shown: Any = None) -> None:
        self.event = dict(event) if event is not None else None
        self.shown = shown
        super().__init__(message)


@dataclass
class RunResult:
    """What a run saw: the classes observed with a match, those that mismatched (class →
    creased's reply), the steps done, and each move kind's measured seconds."""

    matched: List[str] = field(default_factory=list)
    mismatched: Dict[str, JSONObject] = field(default_factory=dict)
    steps: int = 0
    seconds: Dict[str, List[float]] = field(default_factory=dict)


def _canonical(observed: Mapping[str, Any]) -> str:
    return json.dumps(observed, sort_keys=True, separators=(",", ":"))


#: A tour or plan bigger than this is not read (the tabs plan with transitions is ~10 MB).
STEPS_LIMIT = 256 << 20


def _read_lines(path: "os.PathLike[str] | str") -> List[JSONObject]:
    name = os.fspath(path)
    if not os.path.isfile(name):
        raise RigError(f"{name}: not a regular file")
    if os.path.getsize(name) > STEPS_LIMIT:
        raise RigError(f"{name}: larger than {STEPS_LIMIT >> 20} MiB: not a tour or plan")
    with open(name, encoding="utf-8") as f:
        text = f.read()
    try:
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    except json.JSONDecodeError:
        # A version-1 plan may be one document over several lines.
        try:
            return [json.loads(text)]
        except json.JSONDecodeError as e:
            raise RigError(f"{name}: not JSON Lines: {e}") from None


def read_tour(path: "os.PathLike[str] | str") -> List[JSONObject]:
    """A tour's steps (``crease plan --tour -o``), its header checked."""
    lines = _read_lines(path)
    if not lines or lines[0].get("crease") != "tour":
        raise RigError(f"{os.fspath(path)}: not a tour (crease plan --tour -o TOUR.jsonl writes one)")
    return lines[1:]


def read_plan(path: "os.PathLike[str] | str") -> List[JSONObject]:
    """A plan's steps (``crease plan -o PLAN.jsonl``): each sequence from its reset (a step
    whose ``event`` is null and ``why`` ``reset``), its last step ``observe``. A plan of
    version 1 (one JSON document of sequences) is read as the same steps."""
    return _plan_steps(_read_lines(path), os.fspath(path))


def _plan_steps(lines: List[JSONObject], name: str) -> List[JSONObject]:
    if not lines or lines[0].get("crease") != "plan":
        raise RigError(f"{name}: not a plan (crease plan -o PLAN.jsonl writes one)")
    header = lines[0]
    if header.get("version") == 2:
        return lines[1:]
    if header.get("version") != 1:
        raise RigError(f"{name}: a plan of version {header.get('version')!r}; this client reads versions 1 and 2")
    steps: List[JSONObject] = []
    sequences = list(header.get("sequences") or []) + list(header.get("transitionSequences") or [])
    for number, sequence in enumerate(sequences, start=1):
        events = list(sequence.get("events") or [])
        steps.append({"step": len(steps) + 1, "sequence": number, "event": None, "why": "observe" if not events else "reset"})
        for k, event in enumerate(events):
            last = k == len(events) - 1
            step: JSONObject = {"step": len(steps) + 1, "sequence": number, "event": event, "why": "observe" if last else "move"}
            if last:
                step["digest"] = sequence.get("digest")
            steps.append(step)
        if not events:
            steps[-1]["digest"] = sequence.get("digest")
    return steps


#: The device orientation that shows each interface orientation upright (the landscapes swap).
DEVICE_ORIENTATION = {"portrait": "portrait", "portraitUpsideDown": "portraitUpsideDown",
                      "landscapeLeft": "landscapeRight", "landscapeRight": "landscapeLeft"}


def _as_device_move(step: JSONObject) -> JSONObject:
    """A plan's step with an interface orientation as the device orientation a rig turns the phone to."""
    event = step.get("event")
    if not isinstance(event, dict) or event.get("event") != "orientation" or event.get("convention", "interface") != "interface":
        return step
    turned = dict(step)
    turned["event"] = {"event": "orientation", "value": DEVICE_ORIENTATION[str(event["value"])], "convention": "device"}
    return turned


def _as_steps(items: Sequence[Mapping[str, Any]]) -> List[Mapping[str, Any]]:
    """A tour's or plan's steps as they are; a plain list of event objects (``{"event":
    "hinge", …}``) as steps that make each event, with a look after the last."""
    if not items or all("step" in i for i in items):
        return list(items)
    if not all(isinstance(i.get("event"), str) for i in items):
        raise RigError("run takes a tour's or plan's steps, or a list of event objects; this list mixes them")
    last = len(items) - 1
    return [{"step": n + 1, "event": dict(e), "why": "observe" if n == last else "move"} for n, e in enumerate(items)]


def read_steps(path: "os.PathLike[str] | str") -> List[JSONObject]:
    """The steps of a tour or of a plan, whichever the file is."""
    lines = _read_lines(path)
    kind = lines[0].get("crease") if lines else None
    if kind == "plan":
        return _plan_steps(lines, os.fspath(path))
    if kind == "tour":
        return lines[1:]
    raise RigError(f"{os.fspath(path)}: neither a tour nor a plan (crease plan [--tour] -o FILE.jsonl writes one)")


class Rig:
    """An Appium driver, the rig's creased client and the rig file, driven together."""

    def __init__(self, driver: Any, client: Client, rig_file: RigFile, *, fold: Optional[Callable[[float], None]] = None,
                 hooks: Optional[Mapping[str, Callable[[JSONObject], None]]] = None, mapping: TreeMapping = TreeMapping(),
                 hinge_tolerance: Optional[float] = None, screenshots: Optional["os.PathLike[str] | str"] = None) -> None:
        self.driver = driver
        self.client = client
        self.rig = rig_file
        self._fold = fold
        self.hooks = dict(hooks or {})
        self.mapping = mapping
        # The rig file's moves.hinge.tolerance unless the caller says otherwise.
        self.hinge_tolerance = rig_file.hinge_tolerance if hinge_tolerance is None else hinge_tolerance
        device = rig_file.device
        self.ids: Dict[str, str] = dict(device.get("ids") or {})
        # The page source names controls by the app's identifiers: read back as manifest ids.
        self.id_map: Dict[str, str] = {ident: manifest for manifest, ident in self.ids.items()
                                       if manifest not in ("pop", "dismiss", "inspector")}
        self.text_field = str(device.get("textField", "searchField"))
        self.rotations: Dict[str, int] = dict(device.get("rotations") or DEFAULT_ROTATIONS)
        self.deep_links: Dict[str, str] = dict(device.get("deepLinks") or {})
        self.displays: Dict[str, Any] = dict(device.get("displays") or {})
        self.tolerance: Optional[float] = device.get("tolerance")
        self.settle_window = float(device.get("settle", 2.0))
        self.measured: Dict[str, List[float]] = {}
        # Where each look's screenshot goes (seq-SEQ.png, as crease report --screenshots finds it); None: none taken.
        self.screenshots = None if screenshots is None else os.fspath(screenshots)
        if self.screenshots is not None and not os.path.isdir(self.screenshots):
            raise RigError(f"{self.screenshots}: not a directory (the screenshots of the looks go there)")
        self.last_reading: Optional[PageSourceReading] = None
        # The last motion sample sent with a ts: (ts, when it was sent), for the hold to the next.
        self._last_sample: Optional[Tuple[int, float]] = None
        if hasattr(driver, "command_executor") and hasattr(driver.command_executor, "add_command"):
            driver.command_executor.add_command("creaseGetRotation", "GET", "/session/$sessionId/rotation")
            driver.command_executor.add_command("creaseSetRotation", "POST", "/session/$sessionId/rotation")

    # -- one event

    def perform(self, event: Mapping[str, Any]) -> JSONObject:
        """Does ``event`` to the device, checks the device got there, and sends creased what
        the device reports. Returns creased's reply."""
        kind = str(event.get("event"))
        move = "hinge" if kind == "hinge" else kind
        if kind == "orientation":
            if event.get("convention") != "device":
                raise RigError("a rig turns the phone: send the orientation as a device orientation (\"convention\":\"device\")", event)
            if event.get("value") not in self.rig.orientations:
                raise RigError(f"the rig file lists no way to turn the phone to {event.get('value')}", event)
        if not self.rig.can(move):
            raise RigError(f"the rig file says this rig cannot make a {kind} move", event)
        started = time.monotonic()
        reply = getattr(self, f"_do_{kind}", self._do_app_only if kind in APP_ONLY else self._do_app_action)(event)
        self.measured.setdefault(move, []).append(time.monotonic() - started)
        if not reply.get("ok", False):
            raise RigError(f"creased refused what the device reported after {event}: {reply.get('error')}", event, reply)
        return reply

    def _do_hinge(self, event: Mapping[str, Any]) -> JSONObject:
        angle = float(event["angle"])
        if self._fold is not None:
            self._fold(angle)
        else:
            self.driver.execute_script("mobile: setSimulatedHingeAngle", {"angle": angle})
        shown = float(self.driver.execute_script("mobile: getSimulatedHingeAngle"))
        if abs(shown - angle) > self.hinge_tolerance:
            raise RigError(f"the hinge was sent to {angle}° and reads {shown}° (more than {self.hinge_tolerance}° off)", event, shown)
        reply = self.client.hinge(shown)
        if self.displays:
            display = self.client.state()["state"]["display"]
            self.driver.update_settings({"currentDisplayId": self.displays[display]})
        return reply

    def _do_orientation(self, event: Mapping[str, Any]) -> JSONObject:
        wanted = str(event["value"])
        if wanted not in self.rotations:
            # Face up or down: no rotation of the screen's plane shows it; a tilt stage does,
            # through the lab's hook for "orientation" (it returns once the phone lies so).
            hook = self.hooks.get("orientation")
            if hook is None:
                raise RigError(f"the rig file lists {wanted}, which WebDriverAgent's rotation cannot show: register a hook for "
                               "\"orientation\" (the rig's tilt stage) or leave it out of the rig file's orientations", event)
            hook(dict(event))
            return self.client.send({"event": "orientation", "value": wanted, "convention": "device"})
        self.driver.execute("creaseSetRotation", {"x": 0, "y": 0, "z": self.rotations[wanted]})
        z = int(self.driver.execute("creaseGetRotation")["value"]["z"])
        shown = next((name for name, angle in self.rotations.items() if angle == z), None)
        if shown != wanted:
            raise RigError(f"the phone was turned to {wanted} and reports rotation z = {z} ({shown or 'no orientation'})", event, z)
        return self.client.send({"event": "orientation", "value": shown, "convention": "device"})

    def _do_motion(self, event: Mapping[str, Any]) -> JSONObject:
        """A tilt stage's move (a tour's orientation-filter probe): the lab's hook for
        ``"motion"`` turns the phone until its IMU reads the event's gravity and returns once
        there; creased then gets that sample, stamped with its own read time. Two samples
        whose ``ts`` differ are never sent closer together than that: the gap is the hold
        the tour planned past the filter's settle time, which runs on creased's clock (and
        the phone's)."""
        hook = self.hooks.get("motion")
        if hook is None:
            raise RigError("a motion sample is a tilt of the phone: register the rig's tilt stage as the hook for \"motion\" "
                           "(crease.wda_standin.StandInWDA.tilt_hook on the stand-in)", event)
        ts = event.get("ts")
        if isinstance(ts, int) and self._last_sample is not None and ts > self._last_sample[0]:
            wait = (ts - self._last_sample[0]) / 1e9 - (time.monotonic() - self._last_sample[1])
            if wait > 0:
                time.sleep(wait)
        hook(dict(event))
        reply = self.client.send({"event": "motion", "gravity": [float(g) for g in event["gravity"]]})
        if isinstance(ts, int):
            self._last_sample = (ts, time.monotonic())
        return reply

    def _do_keyboard(self, event: Mapping[str, Any]) -> JSONObject:
        visible = bool(event["visible"])
        if visible:
            self._tap(self.text_field, event)
        else:
            self.driver.execute_script("mobile: hideKeyboard")
        shown = bool(self.driver.execute_script("mobile: isKeyboardShown"))
        if shown != visible:
            raise RigError(f"the keyboard should be {'shown' if visible else 'hidden'} and is {'shown' if shown else 'hidden'}", event, shown)
        message: JSONObject = {"event": "keyboard", "visible": shown}
        if event.get("height") is not None:
            message["height"] = event["height"]
        return self.client.send(message)

    def _do_app_action(self, event: Mapping[str, Any]) -> JSONObject:
        kind = str(event["event"])
        target = {"select": "tab", "push": "screen", "present": "sheet"}.get(kind)
        if target is not None:
            ident = str(event[target])
            self._tap(self.ids.get(ident, ident), event)
        elif kind in ("pop", "dismiss", "inspector"):
            default = {"pop": "BackButton", "dismiss": "Dismiss", "inspector": "Inspector"}[kind]
            self._tap(self.ids.get(kind, default), event)
        else:
            raise RigError(f"no actuator for a {kind} event", event)
        return self.client.send(dict(event))

    def _do_app_only(self, event: Mapping[str, Any]) -> JSONObject:
        kind = str(event["event"])
        fields = {k: v for k, v in event.items() if k not in ("event", "ts", "id")}
        if kind in self.hooks:
            self.hooks[kind](dict(event))
        else:
            template = self.deep_links.get(kind)
            if template is not None:
                url = template.format(**{k: json.dumps(v) if isinstance(v, bool) else v for k, v in fields.items()})
            else:
                query = "&".join(f"{k}={json.dumps(v) if isinstance(v, bool) else v}" for k, v in fields.items())
                url = f"crease-standin://{kind}?{query}"
            self.driver.execute_script("mobile: deepLink", {"url": url})
        return self.client.send(dict(event))

    def _tap(self, ident: str, event: Mapping[str, Any]) -> None:
        try:
            element = self.driver.find_element("accessibility id", ident)
            element.click()
        except Exception as e:  # the driver's own error type: say what was tried, keep its message
            raise RigError(f"could not tap {ident!r} for {dict(event)}: {e}", event) from e

    # -- looking

    def look(self) -> JSONObject:
        """Reads the page source and sends it to creased (:func:`crease.appium.look`). With
        ``screenshots``, the screen is then captured into ``seq-SEQ.png`` there, SEQ the seq
        the look was judged at: what ``crease report --screenshots`` (and
        ``--against-screenshots`` for a replay) draws beside the frame expected. A later look
        at the same seq replaces it."""
        reply, self.last_reading = look(self.driver, self.client, id_map=self.id_map, mapping=self.mapping, tolerance=self.tolerance)
        if self.screenshots is not None and isinstance(reply.get("seq"), int):
            self._save_screenshot(os.path.join(self.screenshots, f"seq-{reply['seq']}.png"))
        return reply

    def _save_screenshot(self, target: str) -> None:
        png = self.driver.get_screenshot_as_png()
        if not isinstance(png, bytes) or not png.startswith(b"\x89PNG\r\n\x1a\n"):
            raise RigError("the device's screenshot is not a PNG")
        # Replaced by rename only when it is a regular file (or not there): never a link, a FIFO or a device.
        if os.path.lexists(target) and not stat.S_ISREG(os.lstat(target).st_mode):
            raise RigError(f"{target}: not a regular file; not replaced")
        temporary = f"{target}.{os.getpid()}.tmp"
        with open(temporary, "wb") as f:
            f.write(png)
        os.replace(temporary, target)

    def settle(self, window: Optional[float] = None) -> JSONObject:
        """Looks until the verdict is not ``stale``, for at most ``window`` seconds (the rig
        file's ``device.settle`` unless given)."""
        return settle(self.look, window=self.settle_window if window is None else window)

    # -- resetting and running

    def reset(self) -> JSONObject:
        """Back to the default start state: the app relaunched, the hinge shut, portrait,
        the keyboard hidden, the app-only settings back; then creased loads the default
        state, with the hinge as read, so the model and the phone agree."""
        started = time.monotonic()
        self.driver.execute_script("mobile: terminateApp", {})
        self.driver.execute_script("mobile: activateApp", {})
        if self.rig.can("hinge"):
            self._do_hinge({"event": "hinge", "angle": 0})
        if self.rig.can("orientation") and "portrait" in self.rig.orientations:
            self.driver.execute("creaseSetRotation", {"x": 0, "y": 0, "z": self.rotations["portrait"]})
        if self.rig.can("keyboard"):
            self.driver.execute_script("mobile: hideKeyboard")
        for event in ({"event": "pip", "active": False}, {"event": "liveActivities", "count": 0}, {"event": "splitView", "side": "none"},
                      {"event": "layoutDirection", "value": "ltr"}, {"event": "reduceTransparency", "enabled": False}):
            if self.rig.can(str(event["event"])):
                self._do_app_only(event)
        reply = self.client.load()
        if self.rig.can("hinge"):
            reply = self.client.hinge(float(self.driver.execute_script("mobile: getSimulatedHingeAngle")))
        self.measured.setdefault("reset", []).append(time.monotonic() - started)
        return reply

    def run(self, steps: Sequence[Mapping[str, Any]], *, checkpoint: Optional["os.PathLike[str] | str"] = None, resume: bool = False,
            stop_on_mismatch: bool = False, progress: Optional[Callable[[str], None]] = None) -> RunResult:
        """Runs a tour's or a plan's steps (:func:`read_steps`), or a list of event objects
        (each made in turn, a look after the last), looking at every ``observe`` step (and a
        probe that has ``expected``); a plan's step that begins a sequence (``"event": null``
        with a ``sequence``) resets the phone first. With ``checkpoint``, the last step done and the last
        looked at are written there after each (atomically); ``resume=True`` continues after
        the last step done, first looking at it if its look was cut off, and finishes a
        step the kill cut in half (:meth:`_finish_cut_step`), so no class is observed twice."""
        steps = _as_steps(steps)
        result = RunResult()
        performed = looked = 0
        in_flight: Optional[int] = None
        if resume and checkpoint is not None and os.path.exists(checkpoint):
            saved = self._read_checkpoint(checkpoint)
            performed, looked = int(saved["performed"]), int(saved["looked"])
            result.matched = [str(c) for c in saved["matched"]]
            result.mismatched = dict(saved["mismatched"])
            if saved.get("performing") is not None and int(saved["performing"]) > performed:
                in_flight = int(saved["performing"])
        estimated = sum(float(s.get("cost", 0)) for s in steps)
        spent = sum(float(s.get("cost", 0)) for s in steps if int(s["step"]) <= performed)
        began = time.monotonic()
        for step in steps:
            number = int(step["step"])
            looks = step.get("why") == "observe" or step.get("expected") is not None
            if number < performed or (number == performed and (not looks or looked >= number)):
                continue
            if number > performed:
                if checkpoint is not None:
                    self._write_checkpoint(checkpoint, performed, looked, result, performing=number)
                if step.get("event") is not None:
                    if number == in_flight:
                        self._finish_cut_step(step)
                    else:
                        self.perform(step["event"])
                elif step.get("sequence") is not None:
                    # A plan's sequence starts from the start state; a reset cut by a kill is done again.
                    self.reset()
                performed = number
                result.steps += 1
                spent += float(step.get("cost", 0))
                if checkpoint is not None:
                    self._write_checkpoint(checkpoint, performed, looked, result)
            if not looks:
                continue
            reply = self.settle()
            cls = str(step.get("class", number))
            if reply.get("verdict") == "match":
                result.matched.append(cls)
            else:
                result.mismatched[cls] = reply
            looked = number
            if checkpoint is not None:
                self._write_checkpoint(checkpoint, performed, looked, result)
            if progress is not None:
                progress(f"step {number}/{len(steps)}: {len(result.matched)} classes matched, {len(result.mismatched)} mismatched; "
                         f"{time.monotonic() - began:.0f} s so far, about {estimated - spent:.0f} s of device time left by the estimate")
            if result.mismatched and stop_on_mismatch:
                break
        result.seconds = {k: list(v) for k, v in self.measured.items()}
        return result

    def run_plan(self, plan: "os.PathLike[str] | str", *, checkpoint: Optional["os.PathLike[str] | str"] = None, resume: bool = False,
                 stop_on_mismatch: bool = False, progress: Optional[Callable[[str], None]] = None) -> RunResult:
        """Runs a plan (``crease plan -o PLAN.jsonl``) on the phone: for each sequence a reset
        (20–30 s on a motor rig: a tour costs far less, see ``crease plan --tour``), its
        events, and a look at the layout it ends on. Checkpoints as :meth:`run` does.

        A plan sets interface orientations directly (the model's shortcut); a rig turns the
        phone, so each is done as the device orientation that shows it upright. Where the
        plan's rotation lock holds another, the phone shows another layout than the plan's
        (coverage counts it outside the plan): a tour (``crease plan --tour --rig``) plans
        with the rig's own moves."""
        steps = [_as_device_move(s) for s in read_plan(plan)]
        return self.run(steps, checkpoint=checkpoint, resume=resume, stop_on_mismatch=stop_on_mismatch, progress=progress)

    def _finish_cut_step(self, step: Mapping[str, Any]) -> None:
        """The step a killed run was doing. Creased already at its digest: it was done and
        told. Else, when the step has an ``expected`` and the page source shows exactly
        that, the device did it before the kill, and creased alone is told. Else it is done
        again, and a tap the device refuses (the sheet already up, the screen already
        pushed) is taken as done by the device, and creased alone is told."""
        if self.client.layout().get("digest") == step.get("digest"):
            return
        event = dict(step["event"])
        expected = step.get("expected")
        if expected is not None:
            seen = read_page_source(self.driver.page_source, id_map=self.id_map, mapping=self.mapping).observed
            if _canonical(seen) == _canonical(expected):
                self._tell_only(step, event)
                return
        try:
            self.perform(event)
        except RigError:
            if event.get("event") not in ("push", "pop", "present", "dismiss", "inspector"):
                raise
            self._tell_only(step, event)

    def _tell_only(self, step: Mapping[str, Any], event: JSONObject) -> None:
        reply = self.client.send(event)
        if reply.get("digest") != step.get("digest"):
            raise RigError(f"after the cut step {step['step']} the model is at {reply.get('digest')}, the tour expects {step.get('digest')}",
                           event, reply)

    @staticmethod
    def _read_checkpoint(path: "os.PathLike[str] | str") -> JSONObject:
        with open(path, encoding="utf-8") as f:
            saved = json.load(f)
        if not isinstance(saved, dict) or saved.get("crease") != "rig-checkpoint":
            raise RigError(f"{os.fspath(path)}: not a rig checkpoint")
        return saved

    @staticmethod
    def _write_checkpoint(path: "os.PathLike[str] | str", performed: int, looked: int, result: RunResult,
                          performing: Optional[int] = None) -> None:
        target = os.fspath(path)
        # Replaced by rename only when it is a regular file (or not there): never a link, a FIFO or a device.
        if os.path.lexists(target) and not stat.S_ISREG(os.lstat(target).st_mode):
            raise RigError(f"{target}: the checkpoint is not a regular file; not replaced")
        temporary = f"{target}.{os.getpid()}.tmp"
        with open(temporary, "w", encoding="utf-8") as f:
            json.dump({"crease": "rig-checkpoint", "performed": performed, "looked": looked, "performing": performing,
                       "matched": result.matched, "mismatched": result.mismatched}, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, target)

    # -- replaying a captured trace (crease.reproduce)

    def replay(self, trace: "RecordedTrace | os.PathLike[str] | str", *, speed: float = 1.0, observe: str = "as-recorded") -> "ReplayResult":
        """Drives the device through a captured trace with its recorded timing as far as the
        rig file's costs allow (:func:`crease.reproduce.replay`)."""
        from .reproduce import replay
        return replay(self, trace, speed=speed, observe=observe)

    def reproduce(self, trace: "RecordedTrace | os.PathLike[str] | str", *, runs: int, target: "Target", speed: float = 1.0,
                  observe: str = "as-recorded") -> "Reproduction":
        """Replays the trace ``runs`` times, resetting between, and counts how often ``target``
        came back (:func:`crease.reproduce.reproduce`)."""
        from .reproduce import reproduce
        return reproduce(self, trace, runs=runs, target=target, speed=speed, observe=observe)

    def watch_frames(self, url: Optional[str] = None, *, trace: "os.PathLike[str] | str | None" = None) -> "FrameRecorder":
        """A :class:`crease.frames.FrameRecorder` of the phone's MJPEG stream (``url``, else the
        rig file's ``device.frames.mjpeg``, else the stand-in's ``mjpegUrl`` from ``/status``),
        its frames put on the axis of ``trace`` (else the rig's creased's trace now), delayed
        by ``device.frames.delayMs``. Use it around a tour or a replay, then judge::

            with rig.watch_frames() as frames:
                rig.run(steps)
            judgement = judge_frames(frames.frames(), read_timeline(trace, "crease"))
        """
        from .client import trace_monotonic_origin
        from .frames.live import FrameRecorder
        settings = dict(self.rig.device.get("frames") or {})
        url = url or settings.get("mjpeg") or self._standin_mjpeg_url()
        if not url:
            raise RigError("no MJPEG stream: give its URL, or the rig file's device.frames.mjpeg")
        path = trace if trace is not None else (self.client.stats().get("trace") or {}).get("file")
        if not path:
            raise RigError("the rig's creased records no trace, so frames have no time axis: give one (trace=)")
        origin = trace_monotonic_origin(path)
        if origin is None:
            raise RigError(f"{os.fspath(path)}: its header has no monotonicOrigin")
        return FrameRecorder(str(url), origin, int(float(settings.get("delayMs", 0)) * 1e6))

    def _standin_mjpeg_url(self) -> Optional[str]:
        executor = getattr(self.driver, "command_executor", None)
        # Selenium 4 keeps the server's address in the executor's client config.
        config = getattr(executor, "_client_config", None)
        base = getattr(config, "remote_server_addr", None) or getattr(executor, "_url", None)
        if not base:
            return None
        try:
            with urllib.request.urlopen(f"{str(base).rstrip('/')}/status", timeout=10) as answer:
                value = json.loads(answer.read()).get("value") or {}
        except (OSError, ValueError):
            return None
        found = value.get("mjpegUrl") if isinstance(value, dict) else None
        return str(found) if found else None

    def measured_costs(self) -> Dict[str, float]:
        """The median seconds each move kind took on this rig, ready for the rig file."""
        out: Dict[str, float] = {}
        for kind, times in sorted(self.measured.items()):
            ordered = sorted(times)
            out[kind] = round(ordered[len(ordered) // 2], 3)
        return out

