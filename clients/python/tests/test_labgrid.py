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
