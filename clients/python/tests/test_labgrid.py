"""crease.labgrid with the real labgrid package: an environment file naming the resource
and the driver, labgrid's own pytest plugin (--lg-env), a test that folds and observes
against a real creased the driver starts and stops."""

from __future__ import annotations

import json
import os
import socket
import tempfile
from pathlib import Path

import pytest

pytest.importorskip("labgrid")


def test_labgrid_starts_folds_observes_and_stops(pytester: pytest.Pytester, creased_bin: str, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)  # this session is labgrid's
    sock = os.path.join(tempfile.mkdtemp(prefix="crease-lg-"), "rig.sock")
    traces = tmp_path / "traces"
    env = pytester.makefile(".yaml", env=f"""
imports:
  - crease.labgrid
targets:
  main:
    resources:
      CreaseDaemon:
        socket: {sock}
        labels: {{rig: lab-1, serial: F2LX91}}
        binary: {creased_bin}
        trace_dir: {traces}
    drivers:
      CreaseDriver:
        timeout: 30
""")
    pytester.makepyfile(test_rig="""
        def test_fold_and_observe(target):
            crease = target.get_driver("CreaseDriver")
            target.activate(crease)
            assert crease.hello()["labels"] == {"rig": "lab-1", "serial": "F2LX91"}
            crease.mark("labgrid: fold")
            crease.send({"event": "hinge", "angle": 180})
            layout = crease.layout()
            assert layout["device"]["pose"] == "fullyOpen"
            items = [{"id": i["id"], "frame": i["frame"]} for b in layout["bars"] for i in b["items"]]
            assert crease.observe({"barAxis": layout["barAxis"], "items": items})["verdict"] == "match"
            assert crease.stats()["observations"]["match"] == 1
    """)
    result = pytester.runpytest_subprocess("--lg-env", str(env), "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    # The driver stopped the daemon it started; its trace holds the fold, the mark and the observation.
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with pytest.raises(OSError):
        probe.connect(sock)
    probe.close()
    records = [json.loads(line) for f in sorted(traces.glob("*.jsonl")) for line in f.read_text().splitlines()[1:]]
    assert any(r.get("mark") == "labgrid: fold" for r in records)
    assert [r["verdict"] for r in records if "observe" in r] == ["match"]


def test_labgrid_runs_a_tour_on_the_phone_through_the_rig_driver(pytester: pytest.Pytester, creased_bin: str, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess

    from crease import Daemon
    from crease.wda_standin import StandInWDA

    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)  # this session is labgrid's
    rig_file = Path(__file__).resolve().parents[3] / "docs" / "rigs" / "simulator.json"
    tour = tmp_path / "tour.jsonl"
    subprocess.run([str(Path(creased_bin).with_name("crease")), "plan", "--tour", "--app", "builtin:split", "--rig", str(rig_file),
                    "--max-depth", "2", "-o", str(tour)], check=True, capture_output=True, timeout=120)
    classes = sum(1 for line in tour.read_text().splitlines()[1:] if json.loads(line)["why"] == "observe")
    sock = os.path.join(tempfile.mkdtemp(prefix="crease-lg-"), "rig.sock")
    phone = Daemon.start(creased_bin, workdir=tmp_path / "phone", args=["--app", "builtin:split"], trace=False)
    try:
        with phone.connect() as device, StandInWDA(device) as wda:
            env = pytester.makefile(".yaml", env=f"""
imports:
  - crease.labgrid
targets:
  main:
    resources:
      CreaseDaemon:
        socket: {sock}
        binary: {creased_bin}
        args: ["--app", "builtin:split"]
      AppiumRig:
        url: {wda.url}
        rig_file: {rig_file}
    drivers:
      CreaseDriver: {{}}
      CreaseRigDriver: {{}}
""")
            pytester.makepyfile(test_night=f"""
                def test_the_tour(target):
                    rig = target.get_driver("CreaseRigDriver")
                    target.activate(rig)
                    result = rig.run_tour({str(tour)!r})
                    assert not result.mismatched and len(result.matched) == {classes}
                    rig.reset()
                    assert rig.perform({{"event": "hinge", "angle": 180}})["ok"]
            """)
            result = pytester.runpytest_subprocess("--lg-env", str(env), "-p", "no:cacheprovider")
            result.assert_outcomes(passed=1)
    finally:
        phone.stop()


def test_the_labgrid_example_runs_as_the_docs_say(creased_bin: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess
    import sys

    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    root = Path(__file__).resolve().parents[3]
    example = "clients/python/examples/labgrid"
    run = subprocess.run([sys.executable, "-m", "pytest", "--lg-env", f"{example}/env.yaml", f"{example}/test_fold.py", "-q",
                          "-p", "no:cacheprovider"], cwd=root, env={**os.environ, "CREASE_BIN": creased_bin},
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
