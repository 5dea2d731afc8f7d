"""The rig file (``RIG.json``): what a rig can do to a phone and the seconds each move and
look costs there, the same file ``crease plan --tour --rig`` plans with (docs/rig-file.md).

Read with the rules the planner reads it with: every move given as seconds (0 to 3600) or
``null`` (the rig cannot), ``orientations`` listed exactly when the rig can turn the
phone, at least one way to look, and unknown fields refused by name, so a rig file one
side accepts the other does too."""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

__all__ = ["RigFile", "RigFileError", "MOVES", "LOOKS", "DEVICE_ORIENTATIONS", "load_rig_file", "parse_rig_file"]

#: The moves besides the hinge, in the planner's order.
MOVES: Tuple[str, ...] = ("orientation", "keyboard", "pip", "liveActivities", "splitView", "layoutDirection", "reduceTransparency",
                          "select", "push", "pop", "present", "dismiss", "inspector")
LOOKS: Tuple[str, ...] = ("page-source", "screenshot")
DEVICE_ORIENTATIONS: Tuple[str, ...] = ("portrait", "portraitUpsideDown", "landscapeLeft", "landscapeRight", "faceUp", "faceDown")
#: A rig file is small; a larger one is not a rig file.
MAX_BYTES = 1 << 20
MAX_SECONDS = 3600.0


class RigFileError(ValueError):
    """The rig file cannot be used; ``field`` names the offending field (``moves.pip``)."""

    def __init__(self, message: str, field: Optional[str] = None) -> None:
        self.field = field
        super().__init__(f"{message} (field {field})" if field else message)


@dataclass(frozen=True)
class RigFile:
    name: str
    #: ``(fixed, perDegree)`` seconds, or None when the rig cannot fold the phone.
    hinge: Optional[Tuple[float, float]]
    #: Seconds per move (``MOVES``), None for what the rig cannot do.
    moves: Mapping[str, Optional[float]]
    orientations: Tuple[str, ...]
    looks: Mapping[str, Optional[float]]
    reset: Optional[float]
    observe: str = "page-source"
    #: What only the device side reads (displays, accessibility ids, tolerances), as given.
    device: Mapping[str, Any] = field(default_factory=dict)
    #: Degrees a fold may land off the angle asked for (``moves.hinge.tolerance``, 1 when left
    #: out): the rig accepts a read-back within it; a minimized repro stays this far from thresholds.
    hinge_tolerance: float = 1.0
    #: ``(fixed, perDegree)`` seconds of the tilt stage (``moves.motion``), whose tilts reach
    #: creased as ``motion`` samples; None (or left out of the file) when the rig has none.
    motion: Optional[Tuple[float, float]] = None

    def can(self, move: str) -> bool:
        """Whether the rig makes ``move`` (``"hinge"``, ``"motion"`` or one of ``MOVES``)."""
        if move == "hinge":
            return self.hinge is not None
        if move == "motion":
            return self.motion is not None
        return self.moves.get(move) is not None

    def cost(self, event: Mapping[str, Any], hinge_angle: float = 0.0) -> Optional[float]:
        """Seconds the rig takes to make ``event`` (an event object) from a hinge at
        ``hinge_angle``; None when it cannot make it, and for a ``motion`` sample, whose tilt
        depends on where the stage was (a tour's step carries its cost)."""
        kind = event.get("event")
        if kind == "hinge":
            if self.hinge is None:
                return None
            return self.hinge[0] + self.hinge[1] * abs(float(event["angle"]) - hinge_angle)
        if kind == "orientation":
            if event.get("convention") != "device" or event.get("value") not in self.orientations:
                return None
        return self.moves.get(str(kind))


def _seconds(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RigFileError(f"rig file: {where} must be seconds (a number) or null", where)
    if not 0 <= value <= MAX_SECONDS:
        raise RigFileError(f"rig file: {where} must be seconds between 0 and 3600, got {value}", where)
    return float(value)


def _object(value: Any, where: str, allowed: Tuple[str, ...]) -> Dict[str, Any]:
    if not isinstance(value, dict):
        raise RigFileError(f"rig file: {where or 'the file'} must be a JSON object", where or None)
    for key in value:
        if key not in allowed:
            path = f"{where}.{key}" if where else key
            raise RigFileError(f'rig file: unknown field "{key}"', path)
    return value


def _present(obj: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in obj:
        raise RigFileError(f'rig file: missing field "{where}": give its seconds, or null when the rig cannot', where)
    return obj[key]


def parse_rig_file(data: Union[str, bytes]) -> RigFile:
    """A rig file from its text."""
    try:
        value = json.loads(data)
    except (ValueError, UnicodeDecodeError) as e:
        raise RigFileError(f"rig file is not valid JSON: {e}") from None
    top = _object(value, "", ("crease", "version", "name", "observe", "moves", "orientations", "observations", "reset", "device"))
    if top.get("crease") != "rig":
        raise RigFileError('rig file: field "crease" must be "rig"', "crease")
    if top.get("version") != 1:
        raise RigFileError(f"rig file of version {top.get('version')!r}; this reads version 1", "version")
    name = top.get("name")
    if not isinstance(name, str):
        raise RigFileError('rig file: field "name" must be a string', "name")
    observe = top.get("observe", "page-source")
    if observe not in ("digest", "page-source"):
        raise RigFileError(f'rig file: field "observe" is {observe!r}; expected digest or page-source', "observe")
    moves_obj = _object(_present(top, "moves", "moves"), "moves", ("hinge", "motion") + MOVES)
    hinge_value = _present(moves_obj, "hinge", "moves.hinge")
    hinge: Optional[Tuple[float, float]] = None
    hinge_tolerance = 1.0
    if hinge_value is not None:
        h = _object(hinge_value, "moves.hinge", ("fixed", "perDegree", "tolerance"))
        hinge = (_seconds(_present(h, "fixed", "moves.hinge.fixed"), "moves.hinge.fixed"),
                 _seconds(_present(h, "perDegree", "moves.hinge.perDegree"), "moves.hinge.perDegree"))
        if "tolerance" in h:
            t = h["tolerance"]
            if isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 <= t <= 45:
                raise RigFileError(f"rig file: moves.hinge.tolerance is {t!r}; expected degrees from 0 to 45", "moves.hinge.tolerance")
            hinge_tolerance = float(t)
    # Unlike the other moves, the tilt stage may be left out: files from before it mean none.
    motion: Optional[Tuple[float, float]] = None
    if moves_obj.get("motion") is not None:
        m = _object(moves_obj["motion"], "moves.motion", ("fixed", "perDegree"))
        motion = (_seconds(_present(m, "fixed", "moves.motion.fixed"), "moves.motion.fixed"),
                  _seconds(_present(m, "perDegree", "moves.motion.perDegree"), "moves.motion.perDegree"))
    moves: Dict[str, Optional[float]] = {}
    for move in MOVES:
        raw = _present(moves_obj, move, f"moves.{move}")
        moves[move] = None if raw is None else _seconds(raw, f"moves.{move}")
    orientations: List[str] = []
    listed = top.get("orientations") or []
    if not isinstance(listed, list):
        raise RigFileError('rig file: field "orientations" must be an array', "orientations")
    for i, o in enumerate(listed):
        if o not in DEVICE_ORIENTATIONS:
            raise RigFileError(f"rig file: orientations[{i}] is {o!r}; expected one of {', '.join(DEVICE_ORIENTATIONS)}", f"orientations[{i}]")
        if o in orientations:
            raise RigFileError(f'rig file: orientation "{o}" is listed twice', f"orientations[{i}]")
        orientations.append(o)
    if moves["orientation"] is None and orientations:
        raise RigFileError('rig file: "orientations" lists device orientations but moves.orientation is null', "orientations")
    if moves["orientation"] is not None and not orientations:
        raise RigFileError('rig file: moves.orientation has a cost, so "orientations" must list the device orientations', "orientations")
    looks_obj = _object(_present(top, "observations", "observations"), "observations", LOOKS)
    looks: Dict[str, Optional[float]] = {}
    for look in LOOKS:
        raw = _present(looks_obj, look, f"observations.{look}")
        looks[look] = None if raw is None else _seconds(raw, f"observations.{look}")
    if all(v is None for v in looks.values()):
        raise RigFileError("rig file: the rig must be able to look (observations.page-source or observations.screenshot)", "observations")
    reset_raw = _present(top, "reset", "reset")
    device = top.get("device") or {}
    if not isinstance(device, dict):
        raise RigFileError('rig file: field "device" must be an object', "device")
    return RigFile(name=name, hinge=hinge, hinge_tolerance=hinge_tolerance, moves=moves, orientations=tuple(orientations), looks=looks,
                   reset=None if reset_raw is None else _seconds(reset_raw, "reset"), observe=str(observe), device=device, motion=motion)


def load_rig_file(path: Union[str, "os.PathLike[str]"]) -> RigFile:
    """Reads ``path`` as a regular file of at most 1 MiB and parses it."""
    # Opened without blocking, then checked: a FIFO or a device is refused, not read.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise RigFileError(f"{os.fspath(path)}: not a regular file")
        data = f.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise RigFileError(f"{os.fspath(path)}: more than {MAX_BYTES} bytes: not a rig file")
    return parse_rig_file(data)
