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
