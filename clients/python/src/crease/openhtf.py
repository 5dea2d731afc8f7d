"""OpenHTF support (``pip install ./clients/python[openhtf]``): a plug that connects to
creased on the station, marks each phase in its trace, records the phase's verdicts,
glitches and latency as measurements with validators, and attaches the phase's trace slice
and its timeline picture to the test record (docs/frameworks.md)::

    import openhtf as htf
    from crease.openhtf import CreasePlug, crease_phase

    @crease_phase(budget_us=1000)
    def fold(test, crease):
        for angle in (0, 90, 180):
            crease.client.send({"event": "hinge", "angle": angle})
            ...

    htf.Test(fold).execute()

A phase made with :func:`crease_phase` begins with ``crease.begin_phase(test)`` (a trace
mark, and the daemon's stats period starts again so the figures are the phase's own) and
ends with ``crease.end_phase(test)`` (the measurements, a mark, the attachments).
"""

# OpenHTF ships no type information: its decorators and base classes are Any here.
# mypy: disallow-untyped-decorators=False
from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile
from typing import Any, Callable, List, Optional, Type

import openhtf as htf  # type: ignore[import-untyped]
from openhtf.plugs import BasePlug  # type: ignore[import-untyped]

from .client import Client, JSONObject
from .rig import Rig, read_tour
from .rigfile import load_rig_file

__all__ = ["CreasePlug", "RigPlug", "crease_measurements", "crease_phase", "tour_phase"]


def crease_measurements(budget_us: float = 1000.0) -> List[htf.Measurement]:
    """What :meth:`CreasePlug.end_phase` records, with their validators: no mismatching
    observation, no flapping layout, the p99 latency within the budget."""
    return [
        htf.Measurement("crease_mismatches").equals(0).doc("observations of the device that matched no layout"),
        htf.Measurement("crease_stale").doc("observations that showed a layout still catching up"),
        htf.Measurement("crease_matches").doc("observations that matched"),
        htf.Measurement("crease_flapping").equals(0).doc("layouts that flapped (glitch checks)"),
        htf.Measurement("crease_glitches").doc("every glitch the daemon's checks found in the phase"),
        htf.Measurement("crease_p99_latency_us").in_range(maximum=budget_us).with_units("µs")
        .doc("relayout latency, p99, read to published"),
    ]


class CreasePlug(BasePlug):  # type: ignore[misc]
    """A connection to creased for the test: ``client`` is a :class:`crease.Client`.

    The socket is ``socket_path`` (a class attribute: make a placed subclass with
    :meth:`on`), else $CREASE_SOCKET and the usual default. Attachments are made with the
    ``crease`` command (``crease_cli``, else beside $CREASE_BIN, else on PATH); without one
    the phase is still measured and a log line says why nothing was attached."""

    socket_path: Optional[str] = None
    crease_cli: Optional[str] = None

    def __init__(self) -> None:
        super().__init__()
        self.client = Client(self.socket_path, timeout=30)
        self._phase: Optional[str] = None
        self._first_seq = 0

    @classmethod
    def on(cls, socket_path: str, crease_cli: Optional[str] = None) -> Type["CreasePlug"]:
        """A plug class bound to ``socket_path`` (OpenHTF makes plugs without arguments)."""
        return type("CreasePlug", (cls,), {"socket_path": socket_path, "crease_cli": crease_cli})

    def tearDown(self) -> None:
        self.client.close()

    @staticmethod
    def _phase_name(test: Any) -> str:
        state = getattr(test, "_running_phase_state", None)
        return str(getattr(state, "name", "phase"))

    def begin_phase(self, test: Any) -> None:
        """Marks the phase's start in the trace; the daemon's figures start again here."""
        self._phase = self._phase_name(test)
        self.client.stats(reset=True)
        self._first_seq = int(self.client.mark(f"phase {self._phase}: begin")["seq"])

    def end_phase(self, test: Any, attach: bool = True) -> JSONObject:
        """Records the phase's measurements and attaches its trace slice; returns the stats."""
        name = self._phase or self._phase_name(test)
        stats = self.client.stats()
        last = int(self.client.mark(f"phase {name}: end")["seq"])
        observations = stats.get("observations", {})
        glitches = stats.get("glitches", {})
        test.measurements.crease_mismatches = int(observations.get("mismatch", 0))
        test.measurements.crease_stale = int(observations.get("stale", 0))
        test.measurements.crease_matches = int(observations.get("match", 0))
        test.measurements.crease_flapping = int(glitches.get("flapping", 0))
        test.measurements.crease_glitches = int(sum(int(v) for v in glitches.values()))
        test.measurements.crease_p99_latency_us = float(stats.get("latency", {}).get("p99Us", 0.0))
        if attach:
            self._attach(test, name, stats, last)
        self._phase = None
        return stats

    def _cli(self) -> Optional[str]:
        if self.crease_cli:
            return self.crease_cli
        beside = os.environ.get("CREASE_BIN")
        if beside:
            candidate = os.path.join(os.path.dirname(beside), "crease")
            if os.access(candidate, os.X_OK):
                return candidate
        return shutil.which("crease")

    def _attach(self, test: Any, name: str, stats: JSONObject, last: int) -> None:
        trace = (stats.get("trace") or {}).get("file")
        cli = self._cli()
        if not trace or not cli or last <= self._first_seq:
            test.logger.info("crease: nothing attached for %s (trace %s, crease command %s, seq %s..%s)",
                             name, trace, cli, self._first_seq, last)
            return
        with tempfile.TemporaryDirectory(prefix="crease-htf-") as work:
            piece = os.path.join(work, f"crease-{name}.jsonl")
            picture = os.path.join(work, f"crease-{name}.svg")
            run = subprocess.run([cli, "trace", "slice", trace, "--from", str(self._first_seq + 1), "--to", str(last), "-o", piece],
                                 capture_output=True, text=True, timeout=60)
            if run.returncode != 0:
                test.logger.warning("crease: the trace slice failed: %s", run.stderr.strip())
                return
            test.attach_from_file(piece, name=f"crease-{name}.jsonl", mimetype="application/x-ndjson")
            drawn = subprocess.run([cli, "render", "--trace", piece, "--timeline", "-o", picture],
                                   capture_output=True, text=True, timeout=60)
            if drawn.returncode == 0:
                test.attach_from_file(picture, name=f"crease-{name}.svg", mimetype="image/svg+xml")


def crease_phase(budget_us: float = 1000.0, attach: bool = True,
                 plug: Type[CreasePlug] = CreasePlug) -> Callable[[Callable[[Any, CreasePlug], None]], Any]:
    """Makes ``fn(test, crease)`` an OpenHTF phase measured by creased: the measurements of
    :func:`crease_measurements`, the plug as ``crease``, the phase marked in the trace."""
    def wrap(fn: Callable[[Any, CreasePlug], None]) -> Any:
        @htf.measures(*crease_measurements(budget_us))
        @htf.plug(crease=plug)
        @functools.wraps(fn)
        def phase(test: Any, crease: CreasePlug) -> None:
            crease.begin_phase(test)
            try:
                fn(test, crease)
            finally:
                crease.end_phase(test, attach=attach)
        return phase
    return wrap


class RigPlug(BasePlug):  # type: ignore[misc]
    """A station's rig: an Appium session on the phone (``appium_url``), the rig's creased
    (``socket_path``) and the rig file (``rig_path``), as a :class:`crease.rig.Rig` in
    ``rig``. Class attributes, bound with :meth:`on` (OpenHTF makes plugs without
    arguments); needs Appium-Python-Client."""

    appium_url: Optional[str] = None
    socket_path: Optional[str] = None
    rig_path: Optional[str] = None

    def __init__(self) -> None:
        super().__init__()
        from appium import webdriver
        from appium.options.ios import XCUITestOptions
        if not self.appium_url or not self.rig_path:
            raise ValueError("RigPlug needs appium_url and rig_path: make the plug with RigPlug.on(…)")
        self.client = Client(self.socket_path, timeout=30)
        self.driver = webdriver.Remote(command_executor=self.appium_url, options=XCUITestOptions())
        self.rig = Rig(self.driver, self.client, load_rig_file(self.rig_path))

    @classmethod
    def on(cls, appium_url: str, rig_path: str, socket_path: Optional[str] = None) -> Type["RigPlug"]:
        return type("RigPlug", (cls,), {"appium_url": appium_url, "rig_path": rig_path, "socket_path": socket_path})

    def tearDown(self) -> None:
        self.driver.quit()
        self.client.close()


def _every_class_matched(rows: Any) -> bool:
    """A dimensioned measurement's validator gets every (class, verdict) row at once."""
    return all(row[-1] == "match" for row in rows)


def tour_phase(tour_path: str, plug: Type[RigPlug] = RigPlug, name: str = "tour") -> Any:
    """An OpenHTF phase that runs a tour (``crease plan --tour -o``) on the station's phone:
    ``crease_class_verdict`` has one value per class looked at (dimension ``class``, each
    to be ``match``), ``crease_classes_matched`` and ``crease_classes_mismatched`` (0 to pass)."""
    steps = read_tour(tour_path)

    def phase(test: Any, station: RigPlug) -> None:
        result = station.rig.run(steps)
        for cls in result.matched:
            test.measurements.crease_class_verdict[cls] = "match"
        for cls, reply in result.mismatched.items():
            test.measurements.crease_class_verdict[cls] = str(reply.get("verdict", "mismatch"))
        test.measurements.crease_classes_matched = len(result.matched)
        test.measurements.crease_classes_mismatched = len(result.mismatched)

    # The phase is named before OpenHTF wraps it: the record names phases by function.
    phase.__name__ = name
    measured = htf.measures(
        htf.Measurement("crease_class_verdict").with_dimensions("class").with_validator(_every_class_matched)
        .doc("the verdict of each class the tour looks at"),
        htf.Measurement("crease_classes_matched").doc("classes the device was seen to show as the model does"),
        htf.Measurement("crease_classes_mismatched").equals(0).doc("classes the device showed otherwise"),
    )
    return measured(htf.plug(station=plug)(phase))
