"""The rig (``crease.rig``, ``crease-rig``) running whole page-source tours on the stand-in
device through the real Appium-Python-Client and a real creased: every event kind of the
tour done to the "phone", a run killed with SIGKILL and resumed with nothing observed
twice, a misplaced control seen exactly where it shows, and a reset between two tours."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from contextlib import contextmanager
from typing import Any, Callable, Dict, Iterator, List, Tuple

import pytest
from appium import webdriver
from appium.options.ios import XCUITestOptions

from crease import Daemon, load_rig_file
from crease.rig import Rig, RigError, read_plan, read_steps, read_tour
from crease.wda_standin import StandInWDA
from standin_phone import standin_phone

RIGS = Path(__file__).resolve().parents[3] / "docs" / "rigs"
SIMULATOR = RIGS / "simulator.json"


@pytest.fixture
def standin(creased_bin: str, tmp_path: Path) -> Iterator[Tuple[str, subprocess.Popen[str]]]:
    """``crease-rig standin`` as a lab starts it: its URL on the first line of stdout."""
    process = subprocess.Popen([sys.executable, "-m", "crease.rig_cli", "standin", "--app", "builtin:split", "--creased", creased_bin],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    assert url.startswith("http://127.0.0.1:"), process.stderr.read() if process.stderr else ""
    try:
        yield url, process
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)


def _coverage(creased_bin: str, tour: Path, traces: List[Path]) -> subprocess.CompletedProcess[str]:
    crease = str(Path(creased_bin).with_name("crease"))
    return subprocess.run([crease, "coverage", "--plan", str(tour), "--min", "100", *map(str, traces)],
                          capture_output=True, text=True, timeout=120)


@contextmanager
def _phone(creased_bin: str, tmp_path: Path, app: str) -> Iterator[Tuple[Any, Any, Daemon]]:
    """A stand-in phone (:func:`standin_phone.standin_phone`): its driver, the rig's client and the rig's daemon."""
    with standin_phone(creased_bin, tmp_path, app) as phone:
        yield phone.driver, phone.client, phone.rig_daemon


def test_crease_rig_runs_a_tour_killed_and_resumed_to_full_device_coverage(creased_bin: str, plan_tour: Callable[[Path, str, int], Path], tmp_path: Path,
                                                                          standin: Tuple[str, Any]) -> None:
    url, _ = standin
    tour = plan_tour(tmp_path / "tour.jsonl", "builtin:split", 4)
    steps = read_tour(tour)
    kinds = {s["event"]["event"] for s in steps if s["event"]}
    assert {"hinge", "orientation", "keyboard", "present", "dismiss", "pip", "inspector", "layoutDirection"} <= kinds, kinds
    rig_daemon = Daemon.start(creased_bin, workdir=tmp_path / "rig", args=["--app", "builtin:split"])
    checkpoint = tmp_path / "checkpoint.json"
    command = [sys.executable, "-m", "crease.rig_cli", "run", str(tour), "--rig", str(SIMULATOR), "--appium", url,
               "--socket", rig_daemon.socket_path, "--checkpoint", str(checkpoint)]
    try:
        first = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # Killed once it has looked a few times: the checkpoint says so.
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and first.poll() is None:
            if checkpoint.exists() and json.loads(checkpoint.read_text() or "{}").get("looked", 0) >= 20:
                break
            time.sleep(0.02)
        assert first.poll() is None, first.communicate()
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
        before = json.loads(checkpoint.read_text())
        assert 0 < len(before["matched"]) < len(steps)
        second = subprocess.run(command + ["--resume", "--quiet"], capture_output=True, text=True, timeout=600)
        assert second.returncode == 0, second.stdout + second.stderr
        summary = json.loads(second.stdout)
        after = json.loads(checkpoint.read_text())
        observed = [s["class"] for s in steps if s["why"] == "observe"]
        # Every class observed with a match, none twice.
        assert sorted(after["matched"]) == sorted(observed) and len(set(after["matched"])) == len(after["matched"])
        assert summary["mismatched"] == [] and summary["matched"] == len(observed) and summary["steps"] < len(steps)
        assert set(summary["measuredCosts"]) <= {"hinge", "orientation", "keyboard", "pip", "liveActivities", "splitView",
                                                 "layoutDirection", "reduceTransparency", "select", "push", "pop", "present",
                                                 "dismiss", "inspector"}
    finally:
        rig_daemon.stop()
    covered = _coverage(creased_bin, tour, rig_daemon.trace_files())
    assert covered.returncode == 0 and "(100.00 %)" in covered.stdout, covered.stdout + covered.stderr


def _session(creased_bin: str, tmp_path: Path, name: str) -> Tuple[Daemon, Daemon]:
    phone = Daemon.start(creased_bin, workdir=tmp_path / f"{name}-phone", args=["--app", "builtin:split"], trace=False)
    rig = Daemon.start(creased_bin, workdir=tmp_path / f"{name}-rig", args=["--app", "builtin:split"])
    return phone, rig


def test_a_misplaced_control_mismatches_exactly_where_it_shows_and_a_reset_starts_the_next_tour(creased_bin: str, plan_tour: Callable[[Path, str, int], Path],
                                                                                                 tmp_path: Path) -> None:
    tour = plan_tour(tmp_path / "tour.jsonl", "builtin:split", 3)
    steps = read_tour(tour)
    observes = [s for s in steps if s["why"] == "observe"]
    counts: Dict[str, int] = {}
    for s in observes:
        for item in s["expected"]["items"]:
            counts[item["id"]] = counts.get(item["id"], 0) + 1
    # A control some classes show and some do not.
    item = next(i for i, n in sorted(counts.items()) if 0 < n < len(observes) and not i.startswith("system."))
    showing = {s["class"] for s in observes if any(i["id"] == item for i in s["expected"]["items"])}
    phone, rig_daemon = _session(creased_bin, tmp_path, "a")
    try:
        with phone.connect() as device, rig_daemon.connect() as client, StandInWDA(device) as wda:
            driver = webdriver.Remote(command_executor=wda.url, options=XCUITestOptions())
            try:
                rig = Rig(driver, client, load_rig_file(SIMULATOR))
                wda.misplace[item] = 12
                misplaced = rig.run(steps)
                assert set(misplaced.mismatched) == showing
                assert set(misplaced.matched) == {s["class"] for s in observes} - showing
                # Back to the start, then the same tour again on a sound device: every class matches.
                wda.misplace.clear()
                rig.reset()
                assert client.state()["state"] == device.state()["state"]
                assert client.layout()["digest"] == device.layout()["digest"]
                again = rig.run(steps)
                assert not again.mismatched and len(again.matched) == len(observes)
                assert rig.measured_costs()["reset"] >= 0
                # An actuator that lands short is named with what the device showed.
                wda.short = 3
                with pytest.raises(RigError, match="reads"):
                    rig.perform({"event": "hinge", "angle": 90})
                with pytest.raises(RigError, match="device orientation"):
                    rig.perform({"event": "orientation", "value": "portrait"})
            finally:
                driver.quit()
    finally:
        phone.stop()
        rig_daemon.stop()
    # The coverage of the rig's trace counts what the device was seen to show: every class
    # observed with a match (the second tour), and the misplaced ones mismatched (the first).
    crease = str(Path(creased_bin).with_name("crease"))
    report = json.loads(subprocess.run([crease, "coverage", "--plan", str(tour), "--json", *map(str, rig_daemon.trace_files())],
                                       check=True, capture_output=True, text=True, timeout=120).stdout)
    assert report["headline"] == "observed" and report["observedPercent"] == 100
    assert report["classes"]["mismatched"] == len(showing) and set(report["mismatchedClasses"]) == showing


def test_a_rig_that_cannot_make_a_move_refuses_it_before_touching_the_device(tmp_path: Path) -> None:
    text = SIMULATOR.read_text().replace('"pip": 0.5', '"pip": null')
    path = tmp_path / "no-pip.json"
    path.write_text(text)
    rig = Rig(object(), None, load_rig_file(path))  # type: ignore[arg-type]
    with pytest.raises(RigError, match="cannot make a pip move"):
        rig.perform({"event": "pip", "active": True})
    os.remove(path)


def test_a_tour_of_the_tab_app_matches_every_class_through_the_rig(creased_bin: str, plan_tour: Callable[[Path, str, int], Path], tmp_path: Path) -> None:
    tour = plan_tour(tmp_path / "tabs.jsonl", "builtin:tabs", 3)
    steps = read_tour(tour)
    assert any(s["event"] and s["event"]["event"] == "select" for s in steps)
    with _phone(creased_bin, tmp_path, "builtin:tabs") as (driver, client, rig_daemon):
        result = Rig(driver, client, load_rig_file(SIMULATOR)).run(steps)
    observed = [s["class"] for s in steps if s["why"] == "observe"]
    assert not result.mismatched and sorted(result.matched) == sorted(observed)
    assert _coverage(creased_bin, tour, rig_daemon.trace_files()).returncode == 0


def test_an_app_whose_identifiers_are_not_its_manifest_ids_is_read_through_the_rig_files_ids(creased_bin: str,
                                                                                          tmp_path: Path) -> None:
    import re

    from crease.wda_standin import page_source_of

    rig_daemon = Daemon.start(creased_bin, workdir=tmp_path / "rig", args=["--app", "builtin:split"])
    try:
        with rig_daemon.connect() as client:
            layout = client.layout()
            ids = sorted({i["id"] for b in layout["bars"] for i in b["items"] if not i["id"].startswith("system.")})

            class Renamed:
                """A driver whose page source names each control btn-ID, as an app with its own identifiers would."""

                @property
                def page_source(self) -> str:
                    return re.sub(r'name="(?!BackButton"|More"|TabsMenu")([^"]+)"', r'name="btn-\1"', page_source_of(client.layout()))

            text = SIMULATOR.read_text().replace('"settle": 2', '"settle": 2, "ids": {' + ", ".join(f'"{i}": "btn-{i}"' for i in ids) + "}")
            path = tmp_path / "renamed.json"
            path.write_text(text)
            assert Rig(Renamed(), client, load_rig_file(path)).look()["verdict"] == "match"
    finally:
        rig_daemon.stop()


def test_a_plan_runs_on_the_phone_a_reset_before_each_sequence_and_covers_every_layout(creased_bin: str, tmp_path: Path) -> None:
    """``rig.run_plan``: what ``crease replay PLAN --to`` does to a daemon, done to the stand-in
    phone: each sequence from a reset, its events, a look at the layout it ends on."""
    crease = str(Path(creased_bin).with_name("crease"))
    plan = tmp_path / "plan.jsonl"
    subprocess.run([crease, "plan", "--app", "builtin:sidebar", "--max-depth", "1", "-o", str(plan)], check=True, timeout=120, capture_output=True)
    steps = read_plan(plan)
    assert read_steps(plan) == steps
    sequences = {s["sequence"] for s in steps}
    looks = [s for s in steps if s["why"] == "observe"]
    assert len(looks) == len(sequences) and steps[0]["event"] is None
    with pytest.raises(RigError, match="not a tour"):
        read_tour(plan)
    with _phone(creased_bin, tmp_path, "builtin:sidebar") as (driver, client, rig_daemon):
        rig = Rig(driver, client, load_rig_file(SIMULATOR))
        result = rig.run_plan(plan)
    assert not result.mismatched and len(result.matched) == len(looks), json.dumps(result.mismatched)
    # One reset for each sequence.
    assert len(rig.measured["reset"]) == len(sequences)
    # Every layout the plan reaches with moves a rig makes was shown. A plan sets interface
    # orientations directly; turned by the device, the phone goes through the orientation
    # filter to another layout, which coverage counts outside the plan (a tour plans for that).
    report = json.loads(subprocess.run([crease, "coverage", "--plan", str(plan), "--json", *map(str, rig_daemon.trace_files())],
                                       capture_output=True, text=True, timeout=120).stdout)
    turned = {s["digest"] for s in looks if s["event"] is not None and s["event"]["event"] == "orientation"}
    missing = set(report["missing"])
    assert missing <= turned and report["layouts"]["observed"] == report["layouts"]["total"] - len(missing), report


def test_a_plan_of_version_1_reads_as_the_same_steps(tmp_path: Path) -> None:
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"crease": "plan", "version": 1, "app": "Trailhead", "sequences": [
        {"digest": "ca4b1840358ffb1c", "events": []},
        {"digest": "d0bbc50c9fed6d18", "events": [{"event": "hinge", "angle": 90}]}], "transitionSequences": []}, indent=2))
    steps = read_plan(old)
    assert [(s["sequence"], s["event"], s["why"]) for s in steps] == [
        (1, None, "observe"), (2, None, "reset"), (2, {"event": "hinge", "angle": 90}, "observe")]
    assert [s.get("digest") for s in steps if s["why"] == "observe"] == ["ca4b1840358ffb1c", "d0bbc50c9fed6d18"]
    future = tmp_path / "future.jsonl"
    future.write_text(json.dumps({"crease": "plan", "version": 9}) + "\n")
    with pytest.raises(RigError, match="version 9"):
        read_plan(future)


def test_a_plain_list_of_events_runs_on_the_phone_with_a_look_after_the_last(creased_bin: str, tmp_path: Path) -> None:
    with _phone(creased_bin, tmp_path, "builtin:tabs") as (driver, client, _):
        rig = Rig(driver, client, load_rig_file(SIMULATOR))
        result = rig.run([{"event": "hinge", "angle": 90}, {"event": "orientation", "value": "landscapeLeft", "convention": "device"},
                          {"event": "keyboard", "visible": True}])
        with pytest.raises(RigError, match="mixes them"):
            rig.run([{"event": "hinge", "angle": 0}, {"step": 2, "event": None, "why": "observe"}])
        assert client.state()["state"]["keyboard"]["visible"] is True
    assert result.steps == 3 and result.matched == ["3"] and not result.mismatched, result


def test_face_up_is_a_tilt_stages_move_through_the_labs_hook(creased_bin: str, tmp_path: Path) -> None:
    """WebDriverAgent's rotation turns the screen in its plane; lying flat needs a tilt stage,
    which the lab registers as the hook for "orientation". Without one, the move is refused
    before the phone is touched."""
    rig_file = json.loads(SIMULATOR.read_text())
    rig_file["orientations"] = rig_file["orientations"] + ["faceUp"]
    path = tmp_path / "tilt.json"
    path.write_text(json.dumps(rig_file))
    tilted: List[Dict[str, Any]] = []
    with _phone(creased_bin, tmp_path, "builtin:tabs") as (driver, client, _):
        face_up = {"event": "orientation", "value": "faceUp", "convention": "device"}
        with pytest.raises(RigError, match="register a hook"):
            Rig(driver, client, load_rig_file(path)).perform(face_up)
        rig = Rig(driver, client, load_rig_file(path), hooks={"orientation": tilted.append})
        assert rig.perform(face_up)["ok"] is True
        assert client.state()["state"]["deviceOrientation"] == "faceUp"
    assert tilted == [{"event": "orientation", "value": "faceUp", "convention": "device"}]


def test_a_tilt_stage_sweeps_the_orientation_filter_holding_each_sample_past_the_settle_time(creased_bin: str, tmp_path: Path) -> None:
    """``crease plan --tour --probes`` with a rig file that has a tilt stage (``moves.motion``)
    ends with sweeps across the orientation filter's boundaries: each position is two
    samples, the second a settle time later, and the rig keeps that gap on the phone and on
    its creased. The stand-in's tilt stage is the lab's hook for "motion"; without a hook the
    sample is refused before the phone is touched."""
    crease = str(Path(creased_bin).with_name("crease"))
    tour = tmp_path / "tour.jsonl"
    subprocess.run([crease, "plan", "--tour", "--app", "builtin:tabs", "--rig", str(RIGS / "tilt-stage-rig.json"), "--max-depth", "1",
                    "--probes", "-o", str(tour)], check=True, timeout=120, capture_output=True)
    steps = read_tour(tour)
    samples = [s for s in steps if s["event"] is not None and s["event"]["event"] == "motion"]
    assert len(samples) == 24 and all(isinstance(s["event"]["ts"], int) for s in samples)
    rig_file = load_rig_file(RIGS / "tilt-stage-rig.json")
    assert rig_file.motion == (0.5, 0.02) and rig_file.can("motion") and not load_rig_file(SIMULATOR).can("motion")
    with standin_phone(creased_bin, tmp_path, "builtin:tabs") as phone:
        with pytest.raises(RigError, match="register the rig's tilt stage"):
            Rig(phone.driver, phone.client, rig_file).perform(samples[0]["event"])
        rig = Rig(phone.driver, phone.client, rig_file, hooks={"motion": phone.wda.tilt_hook()})
        began = time.monotonic()
        result = rig.run(steps)
        took = time.monotonic() - began
        phone_state = phone.device.state()["state"]
    rig_daemon = phone.rig_daemon
    looks = [s for s in steps if s.get("expected") is not None or s["why"] == "observe"]
    assert not result.mismatched and len(result.matched) == len(looks), json.dumps(result.mismatched)
    # Twelve held positions, each a settle time and its margin after the sample before it.
    held = (samples[1]["event"]["ts"] - samples[0]["event"]["ts"]) / 1e9
    assert took >= 12 * held
    assert phone_state["deviceOrientation"] == "portrait" and phone_state["pendingOrientation"] is None
    assert _coverage(creased_bin, tour, rig_daemon.trace_files()).returncode == 0


def test_crease_rig_run_tilts_through_the_stage_at_tilt_url(creased_bin: str, tmp_path: Path, standin: Tuple[str, Any]) -> None:
    """``crease-rig run --tilt-url``: a tour's motion probes go to a tilt stage behind HTTP
    (the stand-in's ``/standin/tilt``); without one a motion sample stops the run, named,
    before the phone is touched."""
    url, _ = standin
    crease = str(Path(creased_bin).with_name("crease"))
    rig_file = RIGS / "tilt-stage-rig.json"
    tour = tmp_path / "tour.jsonl"
    subprocess.run([crease, "plan", "--tour", "--app", "builtin:split", "--rig", str(rig_file), "--max-depth", "1", "--probes",
                    "-o", str(tour)], check=True, timeout=120, capture_output=True)
    lines = tour.read_text().splitlines()
    steps = read_tour(tour)
    first_sample = next(i for i, s in enumerate(steps) if s["event"] is not None and s["event"]["event"] == "motion")
    lone = tmp_path / "lone.jsonl"
    lone.write_text(lines[0] + "\n" + json.dumps({**steps[first_sample], "step": 1}) + "\n")
    rig_daemon = Daemon.start(creased_bin, workdir=tmp_path / "rig", args=["--app", "builtin:split"])
    command = [sys.executable, "-m", "crease.rig_cli", "run", "--rig", str(rig_file), "--appium", url,
               "--socket", rig_daemon.socket_path, "--quiet"]
    try:
        untilted = subprocess.run(command + [str(lone)], capture_output=True, text=True, timeout=120)
        assert untilted.returncode != 0 and "tilt stage" in untilted.stderr, untilted.stdout + untilted.stderr
        tilted = subprocess.run(command + [str(tour), "--tilt-url", url + "/standin/tilt"], capture_output=True, text=True, timeout=600)
        assert tilted.returncode == 0, tilted.stdout + tilted.stderr
        summary = json.loads(tilted.stdout)
        looks = [s for s in steps if s.get("expected") is not None]
        assert summary["mismatched"] == [] and summary["matched"] == len(looks), summary
    finally:
        rig_daemon.stop()
