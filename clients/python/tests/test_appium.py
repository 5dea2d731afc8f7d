"""The Appium adapter with the real Appium-Python-Client, against the WebDriverAgent
stand-in (a creased of its own plays the device) and the rig's real creased."""

from __future__ import annotations

import re
import threading
from typing import Iterator, List, Tuple

import pytest
from appium import webdriver
from appium.options.ios import XCUITestOptions

from crease import Client, Daemon
from crease.appium import DuoRig, MappingError, TreeMapping, layout_ids, observed_from_page_source, read_page_source
from crease.wda_standin import StandInWDA, page_source_of


@pytest.fixture
def device(creased_daemon: Daemon, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Client]:
    """The creased that plays the phone (no trace): the stand-in's screen."""
    phone = Daemon.start(creased_daemon.binary, workdir=tmp_path_factory.mktemp("device"), trace=False)
    try:
        with phone.connect() as client:
            yield client
    finally:
        phone.stop()


@pytest.fixture
def session(creased: Client, device: Client) -> Iterator[Tuple[DuoRig, StandInWDA]]:
    with StandInWDA(device) as wda:
        driver = webdriver.Remote(command_executor=wda.url, options=XCUITestOptions())
        try:
            yield DuoRig(driver, creased), wda
        finally:
            driver.quit()


def test_a_page_source_reads_back_as_the_layout_it_shows(creased: Client) -> None:
    creased.send({"event": "hinge", "angle": 180})
    creased.send({"event": "orientation", "value": "landscapeLeft"})
    layout = creased.layout()
    observed = observed_from_page_source(page_source_of(layout, "Trailhead"), known_ids=layout_ids(layout))
    assert observed["barAxis"] == "vertical" and observed["verticalBarSide"] == "right" and observed["complete"] is True
    assert {i["id"] for i in observed["items"]} == {i["id"] for b in layout["bars"] for i in b["items"]}
    assert any(i.get("badge") == 3 for i in observed["items"])
    assert creased.observe(observed)["verdict"] == "match"


def test_a_wrong_mapping_says_so_and_id_map_mends_it(creased: Client) -> None:
    layout = creased.layout()
    ids = layout_ids(layout)
    # An app whose accessibility identifiers are not its manifest ids.
    renamed = re.sub(r'name="(?!BackButton"|More"|TabsMenu")([^"]+)"', r'name="btn-\1"', page_source_of(layout))
    with pytest.raises(MappingError, match="id_map"):
        read_page_source(renamed, known_ids=ids)
    mapped = {f"btn-{i}": i for i in ids}
    assert creased.observe(observed_from_page_source(renamed, known_ids=ids, id_map=mapped))["verdict"] == "match"
    # Not a page source at all.
    with pytest.raises(MappingError, match="XCUIElementTypeWindow"):
        read_page_source("<AppiumAUT/>")
    with pytest.raises(MappingError, match="not XML"):
        read_page_source("<AppiumAUT>")
    # Every assumption can be overridden: with no bar types, nothing is read as a control.
    assert observed_from_page_source(page_source_of(layout), mapping=TreeMapping(bar_types=()))["items"] == []


def test_settle_reaches_match_after_every_fold_step(session: Tuple[DuoRig, StandInWDA]) -> None:
    rig, wda = session
    for angle in (0, 30, 90, 150, 180, 100, 10, 0, 180):
        rig.fold(angle)
        reply = rig.settle()
        assert reply["verdict"] == "match", (angle, reply)
        display = rig.client.state()["state"]["display"]
        assert wda.settings["currentDisplayId"] == rig.displays()[display]
    rig.rotate("landscape")
    assert rig.settle()["verdict"] == "match"
    assert rig.client.layout()["device"]["orientation"] == "landscapeRight"
    assert any(r.endswith("/source") for r in wda.requests)


@pytest.mark.creased_args("--settle-ms", "100")
def test_a_slow_capture_across_an_unfold_is_judged_when_it_was_taken(session: Tuple[DuoRig, StandInWDA], device: Client) -> None:
    rig, wda = session
    rig.fold(0)
    assert rig.settle()["verdict"] == "match"
    # The screen is read closed; while the page source is on its way (0.4 s), the phone unfolds.
    def unfold() -> None:
        device.hinge(180)
        rig.client.hinge(180)
    wda.during_capture = unfold
    wda.delay = 0.4
    reply = rig.look()
    assert reply["verdict"] == "match" and reply["matchedSeq"] < rig.client.sync()["seq"], reply
    # Judged at its arrival instead, the same observation would be a false mismatch.
    assert rig.last_reading is not None
    assert rig.client.observe(rig.last_reading.observed)["verdict"] == "mismatch"
    wda.during_capture = None
    wda.delay = 0.0
    assert rig.settle()["verdict"] == "match"


def test_a_misplaced_control_is_a_mismatch_naming_it(session: Tuple[DuoRig, StandInWDA]) -> None:
    rig, wda = session
    rig.fold(180)
    wda.misplace = {"search": 30}
    reply = rig.settle()
    assert reply["verdict"] == "mismatch"
    assert [d["path"] for d in reply["differences"]] == ["items[search].frame.y"]


def test_clock_offset_and_captured_at_in_either_clock(creased: Client) -> None:
    offset = creased.clock_offset()
    # Same machine, same CLOCK_MONOTONIC: the offset is the estimate's error only.
    assert abs(offset) < 50_000_000, offset
    observed = observed_from_page_source(page_source_of(creased.layout()))
    now = creased.clock()
    assert creased.observe(observed, captured_at=now, clock="daemon")["verdict"] == "match"
    with pytest.raises(ValueError):
        creased.observe(observed, captured_at=(1, 2, 3))
    # From several threads at once, each reading lies between the ones taken around them.
    before = creased.clock()
    readings: List[int] = []
    threads = [threading.Thread(target=lambda: readings.append(creased.clock())) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    after = creased.clock()
    assert len(readings) == 4 and all(before <= r <= after for r in readings)


def test_the_stand_in_answers_a_body_that_is_not_json_with_a_400(session: Tuple[DuoRig, StandInWDA]) -> None:
    """Issue 37: a bad body dropped the connection; WebDriverAgent answers it with an error."""
    import http.client
    import json
    from urllib.parse import urlparse
    _, wda = session
    url = urlparse(wda.url)
    for body in (b"{not json", b"[1, 2]", b"\xff\xfe"):
        conn = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port, timeout=10)
        try:
            conn.request("POST", "/session", body=body, headers={"Content-Type": "application/json"})
            answer = conn.getresponse()
            assert answer.status == 400
            assert json.loads(answer.read())["value"]["error"] == "invalid argument"
        finally:
            conn.close()
