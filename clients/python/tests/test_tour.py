"""A tour (``crease plan --tour``) walked on the stand-in device through the real
Appium-Python-Client: every step's page source reads back as the tour says, and two
layouts of one observable class give byte-equal observations."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any, Callable, Dict, List

import pytest

from crease import RigFileError, load_rig_file
from crease.appium import read_page_source
from standin_phone import standin_phone

RIGS = Path(__file__).resolve().parents[3] / "docs" / "rigs"


def _canonical(observed: Dict[str, Any]) -> str:
    return json.dumps(observed, sort_keys=True, separators=(",", ":"))


# The sidebar app: UIKit's sidebar is a list, not a bar; read as a bar (280 × 951 pt, taller
# than wide) every look of it was a false barAxis mismatch.
@pytest.mark.parametrize("app,depth", [("builtin:split", 4), ("builtin:sidebar", 2)])
def test_each_class_reads_back_as_one_observation_the_tour_expects(creased_bin: str, tmp_path: Path,
                                                                   plan_tour: Callable[[Path, str, int], Path], app: str, depth: int) -> None:
    lines = [json.loads(line) for line in plan_tour(tmp_path / "tour.jsonl", app, depth).read_text().splitlines()]
    header, steps = lines[0], lines[1:]
    assert header["crease"] == "tour" and header["observe"] == "page-source"
    with standin_phone(creased_bin, tmp_path, app) as phone:
        by_class: Dict[str, str] = {}
        digests_of_class: Dict[str, set[str]] = {}
        for step in steps:
            if step["event"] is not None:
                phone.device.send(step["event"])
                assert phone.client.send(step["event"])["digest"] == step["digest"]
            reading = read_page_source(phone.driver.page_source).observed
            seen = _canonical(reading)
            # One class, one observation, whichever of its layouts the phone shows.
            assert by_class.setdefault(step["class"], seen) == seen, step["step"]
            digests_of_class.setdefault(step["class"], set()).add(step["digest"])
            if step["why"] == "observe":
                assert seen == _canonical(step["expected"]), step["step"]
                assert phone.client.observe(reading)["verdict"] == "match"
    observed = [s["class"] for s in steps if s["why"] == "observe"]
    assert len(observed) == len(set(observed)) == header["classes"]
    # The walk did pass through classes of more than one layout: the check above had work to do.
    assert app != "builtin:split" or any(len(d) > 1 for d in digests_of_class.values())


def test_the_rig_file_reads_alike_in_python_and_in_the_planner(creased_bin: str, tmp_path: Path) -> None:
    crease = str(Path(creased_bin).with_name("crease"))
    motor = load_rig_file(RIGS / "motor-rig.json")
    assert load_rig_file(RIGS / "simulator.json").can("hinge")
    assert motor.hinge == (0.3, 0.02) and motor.moves["layoutDirection"] == 15 and motor.reset == 20
    assert motor.hinge_tolerance == 0.5 and load_rig_file(RIGS / "simulator.json").hinge_tolerance == 1.0
    # The tour's costs are the rig file's, step by step, read from Python.
    tour = tmp_path / "tour.jsonl"
    subprocess.run([crease, "plan", "--tour", "--app", "builtin:sidebar", "--rig", str(RIGS / "motor-rig.json"), "--max-depth", "3",
                    "-o", str(tour)], check=True, timeout=300, capture_output=True)
    lines = [json.loads(line) for line in tour.read_text().splitlines()]
    angle, total = 0.0, 0.0
    for step in lines[1:]:
        cost = 0.0
        if step["event"] is not None:
            moved = motor.cost(step["event"], angle)
            assert moved is not None, step
            cost += moved
            if step["event"]["event"] == "hinge":
                angle = float(step["event"]["angle"])
        if step["why"] == "observe":
            cost += motor.looks["page-source"] or 0.0
        assert abs(step["cost"] - cost) < 1e-6, step["step"]
        total += step["cost"]
    assert abs(total - lines[0]["estimatedSeconds"]) < 1e-6
    # A bad rig file is refused on both sides, naming the same field.
    good = (RIGS / "motor-rig.json").read_text()
    for old, new, where in [('"pip": 2,', "", "moves.pip"), ('"reset": 20', '"reset": -1', "reset"),
                            ('"landscapeLeft"', '"sideways"', "orientations[2]"), ('"reset": 20', '"reset": 20, "resets": 1', "resets"),
                            ('"tolerance": 0.5', '"tolerance": -1', "moves.hinge.tolerance"),
                            ('"orientation": 1.5,', '"motion": {"fixed": 0.5, "perDegree": 0.02, "tolerance": 1}, "orientation": 1.5,', "moves.motion.tolerance"),
                            ('"orientation": 1.5,', '"motion": {"fixed": -1, "perDegree": 0.02}, "orientation": 1.5,', "moves.motion.fixed")]:
        bad = tmp_path / "bad.json"
        changed = good.replace(old, new)
        assert changed != good
        bad.write_text(changed)
        with pytest.raises(RigFileError) as raised:
            load_rig_file(bad)
        assert raised.value.field == where
        run = subprocess.run([crease, "plan", "--tour", "--app", "builtin:sidebar", "--max-depth", "1", "--rig", str(bad)],
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 2 and f"(field {where})" in run.stderr, run.stderr
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(RigFileError, match="not a regular file"):
        load_rig_file(fifo)
