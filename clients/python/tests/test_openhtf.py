"""crease.openhtf with the real OpenHTF: a test whose phases drive a real creased through
the plug, and the JSON test record OpenHTF's own output callback writes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openhtf")

import openhtf as htf  # noqa: E402
from openhtf.output.callbacks import json_factory  # noqa: E402

from crease import Daemon  # noqa: E402
from crease.openhtf import CreasePlug, crease_phase  # noqa: E402


def test_a_station_test_records_measurements_and_attachments(creased_daemon: Daemon, tmp_path: Path) -> None:
    plug = CreasePlug.on(creased_daemon.socket_path)

    @crease_phase(budget_us=1_000_000, plug=plug)
    def fold(test: Any, crease: CreasePlug) -> None:
        for angle in (30, 90, 180):
            crease.client.send({"event": "hinge", "angle": angle})
        layout = crease.client.layout()
        items = [{"id": i["id"], "frame": i["frame"]} for b in layout["bars"] for i in b["items"]]
        assert crease.client.observe({"barAxis": layout["barAxis"], "items": items})["verdict"] == "match"

    @crease_phase(budget_us=1_000_000, plug=plug)
    def misplaced(test: Any, crease: CreasePlug) -> None:
        crease.client.send({"event": "orientation", "value": "landscapeLeft"})
        layout = crease.client.layout()
        first = next(i for b in layout["bars"] for i in b["items"])
        moved = dict(first["frame"], y=first["frame"]["y"] + 30)
        crease.client.observe({"items": [{"id": first["id"], "frame": moved}]})

    record_path = tmp_path / "record.json"
    test = htf.Test(fold, misplaced, test_name="crease station")
    test.add_output_callbacks(json_factory.OutputToJSON(str(record_path), indent=2))
    test.execute(test_start=lambda: "duo-0042")

    record = json.loads(record_path.read_text())
    assert record["dut_id"] == "duo-0042" and record["outcome"] == "FAIL"
    phases = {p["name"]: p for p in record["phases"]}
    m = phases["fold"]["measurements"]
    assert m["crease_mismatches"]["measured_value"] == 0 and m["crease_mismatches"]["outcome"] == "PASS"
    assert m["crease_matches"]["measured_value"] == 1 and m["crease_flapping"]["outcome"] == "PASS"
    assert m["crease_p99_latency_us"]["outcome"] == "PASS"
    bad = phases["misplaced"]["measurements"]["crease_mismatches"]
    assert bad["measured_value"] == 1 and bad["outcome"] == "FAIL"
    assert phases["fold"]["outcome"] == "PASS" and phases["misplaced"]["outcome"] == "FAIL"
    assert {"crease-fold.jsonl", "crease-fold.svg"} <= set(phases["fold"]["attachments"])
    creased_daemon.stop()
    marks = [json.loads(line).get("mark") for f in creased_daemon.trace_files() for line in f.read_text().splitlines()]
    assert "phase fold: begin" in marks and "phase misplaced: end" in marks


def test_a_station_runs_a_tour_as_a_phase_with_a_verdict_per_class(creased_bin: str, tmp_path: Path) -> None:
    import subprocess

    from crease.openhtf import RigPlug, tour_phase
    from crease.wda_standin import StandInWDA

    rig_file = Path(__file__).resolve().parents[3] / "docs" / "rigs" / "simulator.json"
    tour = tmp_path / "tour.jsonl"
    subprocess.run([str(Path(creased_bin).with_name("crease")), "plan", "--tour", "--app", "builtin:split", "--rig", str(rig_file),
                    "--max-depth", "2", "-o", str(tour)], check=True, capture_output=True, timeout=120)
    observes = [json.loads(line) for line in tour.read_text().splitlines()[1:]]
    observes = [s for s in observes if s["why"] == "observe"]
    item = observes[0]["expected"]["items"][0]["id"]
    showing = {s["class"] for s in observes if any(i["id"] == item for i in s["expected"]["items"])}
    phone = Daemon.start(creased_bin, workdir=tmp_path / "phone", args=["--app", "builtin:split"], trace=False)
    outcomes = []
    try:
        for fault in (12.0, 0.0):
            station = Daemon.start(creased_bin, workdir=tmp_path / f"station-{fault}", args=["--app", "builtin:split"])
            try:
                with phone.connect() as device:
                    device.load()
                    with StandInWDA(device) as wda:
                        if fault:
                            wda.misplace[item] = fault
                        record_path = tmp_path / f"record-{fault}.json"
                        test = htf.Test(tour_phase(str(tour), plug=RigPlug.on(wda.url, str(rig_file), station.socket_path)),
                                        test_name="crease tour")
                        test.add_output_callbacks(json_factory.OutputToJSON(str(record_path), indent=2))
                        test.execute(test_start=lambda: "duo-0042")
                        outcomes.append(json.loads(record_path.read_text()))
            finally:
                station.stop()
    finally:
        phone.stop()
    misplaced, sound = outcomes
    bad = misplaced["phases"][-1]["measurements"]
    assert misplaced["outcome"] == "FAIL" and bad["crease_classes_mismatched"]["measured_value"] == len(showing)
    assert {row[0] for row in bad["crease_class_verdict"]["measured_value"] if row[1] != "match"} == showing
    good = sound["phases"][-1]["measurements"]
    assert sound["outcome"] == "PASS" and good["crease_classes_matched"]["measured_value"] == len(observes)
