"""The pytest plugin, run in inner pytest sessions (pytester) as a rig's suite would run it."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest


def test_failing_test_report_names_the_trace(pytester: pytest.Pytester, creased_bin: str) -> None:
    pytester.makepyfile("""
        def test_rig(creased):
            creased.send({"event": "hinge", "angle": 90})
            assert creased.layout()["device"]["pose"] == "closed", "on purpose"
    """)
    result = pytester.runpytest(f"--creased-bin={creased_bin}", "--junitxml=report.xml")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*- creased -*", "trace: *creased-*.jsonl", "log: *creased.log"])
    properties = ET.parse(pytester.path / "report.xml").getroot().iter("property")
    traces = [p.get("value") for p in properties if p.get("name") == "creased_trace"]
    assert len(traces) == 1 and str(traces[0]).endswith(".jsonl")
    with open(str(traces[0])) as trace:
        assert '"angle":90' in trace.read()


def test_passing_test_report_has_no_daemon_section(pytester: pytest.Pytester, creased_bin: str) -> None:
    pytester.makepyfile("""
        def test_rig(creased):
            assert creased.send({"event": "hinge", "angle": 90})["seq"] == 1
    """)
    result = pytester.runpytest(f"--creased-bin={creased_bin}", "-rA")
    result.assert_outcomes(passed=1)
    result.stdout.no_fnmatch_line("trace: *")


def test_daemon_that_does_not_exit_zero_fails_the_teardown(pytester: pytest.Pytester, creased_bin: str) -> None:
    pytester.makepyfile("""
        def test_rig(creased_daemon):
            creased_daemon.process.kill()
            creased_daemon.process.wait()
    """)
    result = pytester.runpytest(f"--creased-bin={creased_bin}")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*creased exited with status -9*"])


def test_binary_from_crease_bin(pytester: pytest.Pytester, creased_bin: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CREASE_BIN", creased_bin)
    pytester.makepyfile("""
        def test_rig(creased):
            assert creased.hello()["daemon"].startswith("creased ")
    """)
    pytester.runpytest().assert_outcomes(passed=1)


def test_no_binary_is_a_clear_failure(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CREASE_BIN", raising=False)
    monkeypatch.setenv("PATH", str(pytester.path))
    pytester.makepyfile("""
        def test_rig(creased):
            pass
    """)
    result = pytester.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*no creased binary: pass one (--creased-bin), set CREASE_BIN*"])


def test_a_corpus_is_one_item_per_trace_spread_over_workers(pytester: pytest.Pytester, creased_bin: str) -> None:
    """--crease-corpus: each trace a test item named by its path, verified with crease replay
    --verify; pytest-xdist spreads them; a tampered trace fails with its divergence."""
    from pathlib import Path
    traces = Path(__file__).resolve().parents[3] / "Traces"
    corpus = pytester.path / "corpus"
    (corpus / "rig-1").mkdir(parents=True)
    names = ["slow-unfold.jsonl", "right-to-left.jsonl", "rig-observations.jsonl"]
    for name in names:
        (corpus / "rig-1" / name).write_bytes((traces / name).read_bytes())
    lines = (traces / "tab-switch-browse-task.jsonl").read_text().splitlines()
    # A digest changed by hand in the 5th event record.
    index = [i for i, line in enumerate(lines) if '"event":{' in line][4]
    record = lines[index]
    at = record.index('"digest":"') + len('"digest":"')
    forged = "0123456789abcdef" if record[at:at + 16] != "0123456789abcdef" else "fedcba9876543210"
    lines[index] = record[:at] + forged + record[at + 16:]
    (corpus / "tampered.jsonl").write_text("\n".join(lines) + "\n")
    result = pytester.runpytest(f"--creased-bin={creased_bin}", f"--crease-corpus={corpus}", "-n", "2", "--junitxml=report.xml", "-p", "xdist")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["*tampered.jsonl*", "divergence at seq 5 *expected digest*"])
    cases = ET.parse(pytester.path / "report.xml").getroot().findall(".//testcase")
    assert sorted(c.get("name") for c in cases) == sorted(["rig-1/" + n for n in names] + ["tampered.jsonl"])


def test_a_corpus_checked_for_glitches_fails_only_on_those_the_baseline_does_not_accept(pytester: pytest.Pytester, creased_bin: str) -> None:
    """--crease-glitches BASELINE: the known map-scale occlusion is accepted everywhere and one
    trace's device mismatch on barAxis is accepted for that trace; its other mismatch is new,
    and the failure lists it with the baseline line that would accept it."""
    from pathlib import Path
    traces = Path(__file__).resolve().parents[3] / "Traces"
    corpus = pytester.path / "corpus"
    corpus.mkdir()
    for name in ["slow-unfold.jsonl", "rig-observations.jsonl"]:
        (corpus / name).write_bytes((traces / name).read_bytes())
    baseline = pytester.path / "accepted.jsonl"
    baseline.write_text('{"kind": "occluded", "subject": "mapScale"}\n'
                        '{"kind": "mismatch", "subject": "barAxis", "trace": "rig-observations.jsonl"}\n')
    result = pytester.runpytest(f"--creased-bin={creased_bin}", f"--crease-corpus={corpus}", f"--crease-glitches={baseline}")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        "*rig-observations.jsonl:",
        "1 glitch not in the baseline:",
        "  mismatch    items?edit? *",
        "baseline lines that would accept them:",
        '  {"kind": "mismatch", "subject": "items[edit]", "trace": "rig-observations.jsonl"}',
    ])
    # The line it printed, added, accepts it.
    with baseline.open("a") as f:
        f.write('{"kind": "mismatch", "subject": "items[edit]", "trace": "rig-observations.jsonl"}\n')
    pytester.runpytest(f"--creased-bin={creased_bin}", f"--crease-corpus={corpus}", f"--crease-glitches={baseline}").assert_outcomes(passed=2)
    # A bad baseline is a usage error naming its line.
    baseline.write_text('{"kind": "flash"}\n{"kind": "flash", "seq": 3}\n')
    bad = pytester.runpytest(f"--creased-bin={creased_bin}", f"--crease-corpus={corpus}", f"--crease-glitches={baseline}")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(["*accepted.jsonl:2: unknown member 'seq' (kind, subject, trace)*"])


def test_stale_looks_are_reported_apart_and_fail_only_when_asked(pytester: pytest.Pytester, creased_bin: str) -> None:
    """Issue 37: a stale look (the device catching up) is its own kind, never counted as a
    mismatch: the baseline that accepts every mismatch of the trace passes it, and only
    --crease-stale-fails makes the stale barAxis look fail the item."""
    from pathlib import Path
    traces = Path(__file__).resolve().parents[3] / "Traces"
    corpus = pytester.path / "corpus"
    corpus.mkdir()
    (corpus / "rig-observations.jsonl").write_bytes((traces / "rig-observations.jsonl").read_bytes())
    baseline = pytester.path / "accepted.jsonl"
    baseline.write_text('{"kind": "occluded"}\n{"kind": "mismatch"}\n')
    args = [f"--creased-bin={creased_bin}", f"--crease-corpus={corpus}", f"--crease-glitches={baseline}"]
    pytester.runpytest(*args).assert_outcomes(passed=1)
    strict = pytester.runpytest(*args, "--crease-stale-fails")
    strict.assert_outcomes(failed=1)
    strict.stdout.fnmatch_lines(["1 glitch not in the baseline:", "  stale       barAxis *"])
