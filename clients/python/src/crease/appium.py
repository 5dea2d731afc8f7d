"""From an Appium session to Crease verdicts: WebDriverAgent page sources read into
``observe`` objects, and a rig that folds, rotates and looks (docs/appium.md).

Standard library only: the driver is whatever object the caller has (Appium-Python-Client's
``webdriver.Remote``, or anything with ``page_source``, ``execute_script``,
``update_settings`` and ``orientation``).

How iOS 27.1 shows the vertical bar in the accessibility tree is documented nowhere we
found. Every assumption the reader makes is a field of :class:`TreeMapping`, so a lab whose
phone shows otherwise changes that field; and a mapping that finds none of the app's
controls raises :class:`MappingError` rather than sending an observation that would only
come back as a mismatch.
"""

from __future__ import annotations

import time
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Set, Tuple

from .client import Client, JSONObject

__all__ = ["TreeMapping", "PageSourceReading", "MappingError", "read_page_source", "observed_from_page_source",
           "layout_ids", "look", "settle", "DuoRig"]


class MappingError(ValueError):
    """The page source could not be read as the mapping expects: no control of the app
    was found (the identifiers differ: pass ``id_map``), or the tree is not a page source."""


@dataclass(frozen=True)
class TreeMapping:
    """What each part of a WebDriverAgent page source is taken to be. Defaults are our
    assumptions, written down; override any of them.

    - ``bar_types``: element types that are bars. Controls are read only inside them.
    - ``list_types``: element types that are lists (UIKit's sidebar, a collection view of
      rows): their controls are read, on a vertical axis, but a list is not a bar, so it
      says nothing of ``barAxis`` or the vertical bar's side.
    - ``control_types``: element types that are controls.
    - ``vertical_when_taller``: a bar taller than it is wide is a vertical bar (the side
      column); otherwise horizontal. The tree gives no axis, only frames.
    - ``system_ids``: the identifiers the system gives its own controls, mapped to
      Crease's ids (``system.back``, ``system.overflow``, ``system.tabs``).
    - ``badge_from_value``: a control whose ``value`` is a whole number shows that badge.
    - ``selected_values``: ``value`` texts that mark the selected tab (also read: an
      attribute ``selected="true"``).
    - ``only_visible``: elements with ``visible="false"`` are not on screen.
    """

    bar_types: Tuple[str, ...] = ("XCUIElementTypeNavigationBar", "XCUIElementTypeToolbar", "XCUIElementTypeTabBar")
    list_types: Tuple[str, ...] = ("XCUIElementTypeCollectionView",)
    control_types: Tuple[str, ...] = ("XCUIElementTypeButton", "XCUIElementTypeSegmentedControl", "XCUIElementTypeSearchField",
                                      "XCUIElementTypeCell")
    vertical_when_taller: bool = True
    system_ids: Mapping[str, str] = field(default_factory=lambda: {
        "BackButton": "system.back", "Back": "system.back",
        "More": "system.overflow", "ellipsis": "system.overflow",
        "TabsMenu": "system.tabs",
    })
    badge_from_value: bool = True
    selected_values: Tuple[str, ...] = ("1", "Selected")
    only_visible: bool = True


@dataclass
class PageSourceReading:
    """What a page source showed: the ``observed`` object for ``observe``, and what the
    observation vocabulary has no place for (the selected tab, controls no id matched)."""

    observed: JSONObject
    screen: Tuple[float, float]
    selected_tab: Optional[str] = None
    unmapped: List[str] = field(default_factory=list)


def _number(element: ElementTree.Element, name: str) -> float:
    text = element.get(name)
    if text is None:
        raise MappingError(f"a {element.tag} has no {name!r}: not a WebDriverAgent page source")
    try:
        return float(text)
    except ValueError:
        raise MappingError(f"a {element.tag} has {name}={text!r}, not a number") from None


def _points(value: float) -> float:
    """A whole number of points as an int, as Crease writes frames (``20``, not ``20.0``),
    so an observation reads back byte for byte as the tour's ``expected``."""
    return int(value) if value.is_integer() else value


def _frame(element: ElementTree.Element) -> Dict[str, float]:
    return {"x": _points(_number(element, "x")), "y": _points(_number(element, "y")),
            "w": _points(_number(element, "width")), "h": _points(_number(element, "height"))}


def layout_ids(layout: Mapping[str, Any]) -> Set[str]:
    """Every control id a layout places: in its bars and their overflow menus."""
    ids: Set[str] = set()
    for bar in layout.get("bars", []):
        ids.update(item["id"] for item in bar.get("items", []))
        ids.update(bar.get("overflow", []))
    return ids


def read_page_source(xml: str, *, id_map: Optional[Mapping[str, str]] = None, mapping: TreeMapping = TreeMapping(),
                     known_ids: Optional[Iterable[str]] = None, complete: bool = True) -> PageSourceReading:
    """Reads a WebDriverAgent page source (``driver.page_source``).

    Controls are named by their ``name`` attribute (the accessibility identifier, else the
    label), through ``id_map`` when the app's identifiers are not its manifest ids, then
    ``mapping.system_ids``. Frames are the elements' ``x``, ``y``, ``width`` and ``height``
    in points; each control's axis is its bar's. ``complete`` says the page source is the
    whole window, so a control the layout has and the tree lacks is missing.

    ``known_ids`` (the ids the app can show, e.g. :func:`layout_ids` of the current layout):
    when the tree has controls and not one of them is known, :class:`MappingError` says so."""
    try:
        root = ElementTree.fromstring(xml)
    except ElementTree.ParseError as e:
        raise MappingError(f"the page source is not XML: {e}") from None
    windows = [e for e in root.iter() if e.tag == "XCUIElementTypeWindow"]
    if not windows:
        raise MappingError("the page source has no XCUIElementTypeWindow: not a WebDriverAgent page source of an app")
    window = windows[0]
    width, height = _number(window, "width"), _number(window, "height")
    names = dict(id_map or {})
    items: List[JSONObject] = []
    unmapped: List[str] = []
    selected: Optional[str] = None
    vertical_sides: List[str] = []
    axes: List[str] = []

    def visible(e: ElementTree.Element) -> bool:
        return not mapping.only_visible or e.get("visible", "true") != "false"

    for bar in window.iter():
        is_list = bar.tag in mapping.list_types
        if (bar.tag not in mapping.bar_types and not is_list) or not visible(bar):
            continue
        bar_frame = _frame(bar)
        if is_list:
            axis = "vertical"
        else:
            axis = "vertical" if mapping.vertical_when_taller and bar_frame["h"] > bar_frame["w"] else "horizontal"
            axes.append(axis)
            if axis == "vertical":
                vertical_sides.append("right" if bar_frame["x"] + bar_frame["w"] / 2 > width / 2 else "left")
        for control in bar.iter():
            if control is bar or control.tag not in mapping.control_types or not visible(control):
                continue
            raw = control.get("name") or control.get("label")
            if not raw:
                continue
            ident = names.get(raw) or mapping.system_ids.get(raw) or raw
            item: JSONObject = {"id": ident, "frame": _frame(control), "axis": axis}
            value = control.get("value")
            in_tab_bar = bar.tag == "XCUIElementTypeTabBar"
            if control.get("selected") == "true" or (in_tab_bar and value in mapping.selected_values):
                selected = ident
            elif mapping.badge_from_value and value is not None and value.isdigit():
                item["badge"] = int(value)
            items.append(item)
            if known_ids is not None and ident not in known_ids and not ident.startswith("system."):
                unmapped.append(raw)
    if known_ids is not None and unmapped and len(unmapped) == sum(1 for i in items if not i["id"].startswith("system.")):
        raise MappingError(
            f"none of the page source's {len(unmapped)} controls is a control of the app "
            f"(first: {', '.join(repr(u) for u in unmapped[:3])}): the app's accessibility identifiers are not "
            "its manifest ids; pass id_map={identifier: manifest id}")
    observed: JSONObject = {"items": items, "complete": complete}
    if axes:
        observed["barAxis"] = "vertical" if "vertical" in axes else "horizontal"
    if vertical_sides:
        observed["verticalBarSide"] = vertical_sides[0]
    return PageSourceReading(observed=observed, screen=(width, height), selected_tab=selected, unmapped=unmapped)


def observed_from_page_source(xml: str, *, id_map: Optional[Mapping[str, str]] = None, mapping: TreeMapping = TreeMapping(),
                              known_ids: Optional[Iterable[str]] = None, complete: bool = True) -> JSONObject:
    """The ``observed`` object of a page source: see :func:`read_page_source`."""
    return read_page_source(xml, id_map=id_map, mapping=mapping, known_ids=known_ids, complete=complete).observed


def look(driver: Any, client: Client, *, id_map: Optional[Mapping[str, str]] = None, mapping: TreeMapping = TreeMapping(),
         tolerance: Optional[float] = None) -> Tuple[JSONObject, PageSourceReading]:
    """Reads the page source and sends it to creased as an observation captured over the
    time the page source took (``capturedAt``), so a slow capture is judged against what
    was on screen while it was read. Returns creased's reply (``verdict`` …) and the reading."""
    known = layout_ids(client.layout())
    started = time.monotonic_ns()
    xml = driver.page_source
    ended = time.monotonic_ns()
    reading = read_page_source(xml, id_map=id_map, mapping=mapping, known_ids=known)
    return client.observe(reading.observed, tolerance=tolerance, captured_at=(started, ended)), reading


def settle(look_once: Callable[[], JSONObject], *, window: float = 2.0, pause: float = 0.05) -> JSONObject:
    """Looks until the verdict is not ``stale`` (the device still catching up), for at
    most ``window`` seconds; returns the last reply."""
    deadline = time.monotonic() + window
    reply = look_once()
    while reply.get("verdict") == "stale" and time.monotonic() < deadline:
        time.sleep(pause)
        reply = look_once()
    return reply


class DuoRig:
    """The first adapter (fold, turn, look), kept for code written against it: a thin
    layer over :class:`crease.rig.Rig`, which does every event kind from a rig file
    (docs/rig.md); new code uses ``Rig``. What it does, ``Rig`` does: ``fold`` is
    ``Rig.perform`` of a ``hinge`` event, ``rotate`` of a device ``orientation``, ``look``
    and ``settle`` are ``Rig``'s.

    ``fold`` moves the hinge: by default the simulator's ``mobile: setSimulatedHingeAngle``;
    a real rig passes its own motor function (degrees in, returns when moved). Either way
    the hinge is then read back (``mobile: getSimulatedHingeAngle``, degrees, on devices
    too) and sent to creased, and the display that creased says is showing is selected
    (``currentDisplayId``: folding does not switch it). ``displays`` maps ``"outer"`` and
    ``"inner"`` to display ids; without it, ``mobile: listDisplays`` is read and its main
    display taken as the outer one (an assumption: say otherwise with ``displays``)."""

    def __init__(self, driver: Any, client: Client, *, fold: Optional[Callable[[float], None]] = None,
                 displays: Optional[Mapping[str, Any]] = None, id_map: Optional[Mapping[str, str]] = None,
                 mapping: TreeMapping = TreeMapping(), tolerance: Optional[float] = None) -> None:
        from .rig import Rig
        from .rigfile import RigFile
        device: Dict[str, Any] = {"ids": {manifest: ident for ident, manifest in (id_map or {}).items()}}
        if tolerance is not None:
            device["tolerance"] = tolerance
        # What DuoRig could do: fold (any reading is taken, as it always was) and turn the
        # phone upright or to landscape; costs do not matter to it.
        rig_file = RigFile(name="DuoRig", hinge=(0.0, 0.0), moves={"orientation": 0.0}, orientations=("portrait", "landscapeLeft"),
                           looks={"page-source": 0.0}, reset=None, device=device, hinge_tolerance=float("inf"))
        self.rig = Rig(driver, client, rig_file, fold=fold, mapping=mapping)
        self.driver = driver
        self.client = client
        self._displays: Optional[Dict[str, Any]] = dict(displays) if displays is not None else None

    @property
    def last_reading(self) -> Optional[PageSourceReading]:
        return self.rig.last_reading

    # -- the device

    def displays(self) -> Dict[str, Any]:
        """``{"outer": id, "inner": id}``, from ``displays`` or ``mobile: listDisplays``."""
        if self._displays is None:
            listed = self.driver.execute_script("mobile: listDisplays") or []
            if not isinstance(listed, list) or len(listed) < 2:
                raise MappingError(f"mobile: listDisplays gave {listed!r}; pass displays={{'outer': id, 'inner': id}}")

            def is_main(d: Any) -> bool:
                return isinstance(d, Mapping) and bool(d.get("isMain") or d.get("isMainDisplay"))

            main = next((d for d in listed if is_main(d)), listed[0])
            other = next(d for d in listed if d is not main)

            def ident(d: Any) -> Any:
                return d.get("id") if isinstance(d, Mapping) else d

            self._displays = {"outer": ident(main), "inner": ident(other)}
        return self._displays

    def hinge(self) -> float:
        """The hinge as the device reports it, in degrees."""
        return float(self.driver.execute_script("mobile: getSimulatedHingeAngle"))

    def fold(self, angle: float) -> JSONObject:
        """Moves the hinge to ``angle`` degrees, sends the reading to creased and selects
        the display creased says is showing. Returns creased's reply to the hinge event."""
        self.rig.displays = self.displays()
        return self.rig.perform({"event": "hinge", "angle": angle})

    def rotate(self, orientation: str) -> JSONObject:
        """Turns the device (``"portrait"`` or ``"landscape"``) and tells creased the device
        orientation it reports. ``landscape`` is the device orientation ``landscapeLeft``
        (home side on the right, WebDriverAgent's ``LANDSCAPE``): sent as a device
        orientation, so the lock and the app's supported orientations apply."""
        names = {"portrait": "portrait", "landscape": "landscapeLeft"}
        if orientation not in names:
            raise ValueError('orientation is "portrait" or "landscape"')
        return self.rig.perform({"event": "orientation", "value": names[orientation], "convention": "device"})

    # -- looking

    def look(self) -> JSONObject:
        """Reads the page source and sends it to creased (:func:`look`)."""
        return self.rig.look()

    def settle(self, window: float = 2.0, pause: float = 0.05) -> JSONObject:
        """Looks until the verdict is not ``stale`` (:func:`settle`)."""
        return settle(self.rig.look, window=window, pause=pause)
