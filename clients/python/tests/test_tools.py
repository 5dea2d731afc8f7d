"""The example rig loop, the benchmark and the package's types, run as a user runs them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from crease import Daemon

HERE = Path(__file__).resolve().parent
EXAMPLE = HERE.parent / "examples" / "rig_loop.py"
APPIUM_EXAMPLE = HERE.parent / "examples" / "appium_rig.py"
OPENHTF_EXAMPLE = HERE.parent / "examples" / "openhtf_station.py"
RUN_TIMEOUT = 300  # seconds: generous for a loaded machine


def test_rig_loop_example_streams_follows_observes_and_marks(creased_daemon: Daemon) -> None:
    run = subprocess.run([sys.executable, str(EXAMPLE), "--socket", creased_daemon.socket_path,
                          "--seconds", "0.5", "--rate", "1000"],
                         capture_output=True, text=True, timeout=RUN_TIMEOUT)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("rig: creased ")
    poses = [line.split(": ")[1].split(" ")[0] for line in lines if line.startswith("layout seq ")]
    # Shut, unfolded flat, folded shut again.
    assert poses[0] == "closed" and "fullyOpen" in poses and poses[-1] == "closed"
    assert "500 ticks, 1 encoder dropout marked, 1 mismatch marked, 0 rejected" in lines[-1]
    looks = [line.split(": ")[1].split(" ")[0] for line in lines if line.startswith("  look ")]
    assert looks.count("mismatch") == 1 and "match" in looks
    # The conformance topic brought every verdict that was not a match.
    pushed = [line.split(" ")[1] for line in lines if line.startswith("conformance: ")]
    assert sorted(pushed) == sorted(v for v in looks if v != "match")
    creased_daemon.stop()
    records = [json.loads(line) for path in creased_daemon.trace_files() for line in path.read_text().splitlines()]
    marks = [r["mark"] for r in records if "mark" in r]
    assert len(marks) == 2 and marks[0].startswith("glitch: encoder jumped") and marks[1].startswith("mismatch at seq")
    assert [r["verdict"] for r in records if "observe" in r] == looks
    assert sum(1 for r in records if "event" in r and r["event"].get("event") == "hinge") == 499


def test_appium_example_runs_the_whole_loop_against_the_stand_in(creased_daemon: Daemon, tmp_path: Path) -> None:
    phone = Daemon.start(creased_daemon.binary, workdir=tmp_path / "phone", trace=False)
    try:
        run = subprocess.run([sys.executable, str(APPIUM_EXAMPLE), "--socket", creased_daemon.socket_path,
                              "--device-socket", phone.socket_path], capture_output=True, text=True, timeout=RUN_TIMEOUT)
    finally:
        phone.stop()
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert lines[-1] == "all verdicts as expected"
    assert any(line.startswith("search 30 pt low: mismatch (items[search].frame.y)") for line in lines)
    assert sum(1 for line in lines if line.startswith("fold ") and line.endswith(": match")) == 8
    creased_daemon.stop()
    records = [json.loads(line) for path in creased_daemon.trace_files() for line in path.read_text().splitlines()]
    captured = [r for r in records if "observe" in r and "captured" in r]
    # Captured before the observation arrived, to within a millisecond of clock-offset error.
    assert captured and all(r["captured"][0] <= r["captured"][1] <= r["t"] + 1_000_000 for r in captured)


def test_benchmark_prints_its_figures(creased_daemon: Daemon) -> None:
    run = subprocess.run([sys.executable, "-m", "crease.bench", "--socket", creased_daemon.socket_path,
                          "--events", "2000", "--round-trips", "200", "--json"],
                         capture_output=True, text=True, timeout=RUN_TIMEOUT)
    assert run.returncode == 0, run.stderr
    figures = json.loads(run.stdout)
    assert figures["sendMany"]["events"] == 2000 and figures["sendMany"]["eventsPerSecond"] > 0
    rtt = figures["roundTrip"]
    assert 0 < rtt["p50Us"] <= rtt["p99Us"] <= rtt["maxUs"]
    with creased_daemon.connect() as client:
        assert client.stats()["events"] == 1000 + 2000 + 200  # warm-up, send_many, round trips


def test_package_and_example_pass_mypy_strict() -> None:
    for target in (["-p", "crease"], [str(EXAMPLE)], [str(APPIUM_EXAMPLE)], [str(OPENHTF_EXAMPLE)]):
        run = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", *target],
                             capture_output=True, text=True, timeout=RUN_TIMEOUT)
        assert run.returncode == 0, run.stdout + run.stderr
