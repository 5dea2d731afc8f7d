"""Reproducing a captured glitch on the phone (``crease.reproduce``, ``crease-rig reproduce``):
the stand-in device through the real Appium-Python-Client and real creased daemons, with a
seeded intermittent fault, so the rate a reproduction reports can be checked against the
fault's probability."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator, List, Tuple

import pytest

from crease import Client, Daemon, load_rig_file
from crease.reproduce import ReplayError, Target, binomial_interval, read_trace, timing_plan
from crease.rig import Rig
from crease.wda_standin import StandInWDA
from standin_phone import standin_phone

RIGS = Path(__file__).resolve().parents[3] / "docs" / "rigs"
SIMULATOR = RIGS / "simulator.json"
APP = "builtin:split"


@dataclass
class Session:
    """A stand-in phone (its own creased), the rig's creased, and a Rig on both."""

    rig: Rig
    wda: StandInWDA
    client: Client
    rig_daemon: Daemon


@contextmanager
def _session(creased_bin: str, tmp_path: Path, name: str, rig_file: Path = SIMULATOR) -> Iterator[Session]:
    with standin_phone(creased_bin, tmp_path, APP, name) as phone:
        yield Session(Rig(phone.driver, phone.client, load_rig_file(rig_file)), phone.wda, phone.client, phone.rig_daemon)


def _record_a_mismatch(creased_bin: str, tmp_path: Path) -> Tuple[Path, int, str]:
    """A rig's session on a device that drew one control 30 pt low at the last look: the
    trace, the seq of that look, and the control."""
    with _session(creased_bin, tmp_path, "0") as session:
        rig, wda, client, rig_daemon = session.rig, session.wda, session.client, session.rig_daemon
        rig.reset()
        rig.perform({"event": "hinge", "angle": 90})
        assert rig.settle()["verdict"] == "match"
        rig.perform({"event": "keyboard", "visible": True})
        item = next(i["id"] for b in client.layout()["bars"] for i in b["items"] if not i["id"].startswith("system."))
        wda.misplace[item] = 30
        look = rig.look()
        assert look["verdict"] == "mismatch", look
        seq = int(look["seq"])
    traces = rig_daemon.trace_files()
    assert traces, "the rig's creased recorded a trace"
    return traces[-1], seq, item


def _reproduce(creased_bin: str, tmp_path: Path, trace: Path, target: Target, runs: int,
               faults: List[Tuple[float, str, Tuple[object, ...]]], seed: int, name: str) -> Tuple[int, List[object], List[Path]]:
    with _session(creased_bin, tmp_path, name) as session:
        rig, wda, client, rig_daemon = session.rig, session.wda, session.client, session.rig_daemon
        wda.intermittent = faults
        wda.seed(seed)
        result = rig.reproduce(trace, runs=runs, target=target, speed=20)
    assert result.runs == runs and len(result.traces) == runs
    # Each run is marked in the rig's trace: its seq range lies in the file named.
    marks = [json.loads(line).get("mark") for f in rig_daemon.trace_files() for line in f.read_text().splitlines()[1:]]
    assert sum(1 for m in marks if m and m.endswith(": begin")) == runs
    return result.reproduced, list(result.at), rig_daemon.trace_files()


def test_an_intermittent_misplaced_control_comes_back_at_its_rate_and_a_sound_device_never_shows_it(creased_bin: str, tmp_path: Path) -> None:
    trace, seq, item = _record_a_mismatch(creased_bin, tmp_path)
    recorded = read_trace(trace)
    assert any(s.seq == seq and s.verdict == "mismatch" for s in recorded.steps)
    target = Target(seq=seq)
    runs = 20
    reproduced, at, _ = _reproduce(creased_bin, tmp_path, trace, target, runs, [(0.5, "misplace", (item, 30.0))], seed=11, name="half")
    low, high = binomial_interval(reproduced, runs)
    assert low <= 0.5 <= high, f"reproduced {reproduced} of {runs}: 0.5 outside [{low:.2f}, {high:.2f}]"
    assert 0 < reproduced < runs and [a["run"] for a in at] == sorted(a["run"] for a in at)  # type: ignore[index]
    never, _, sound_traces = _reproduce(creased_bin, tmp_path, trace, target, 3, [], seed=11, name="sound")
    assert never == 0
    # Lined up by event with its original, a sound run agrees on every move and parts at the
    # look: the original's device drew the control 30 pt low, the replay's did not.
    crease = str(Path(creased_bin).with_name("crease"))
    diff = subprocess.run([crease, "trace", "diff", str(trace), str(sound_traces[-1]), "--by-event", "--run", "2", "--json"],
                          capture_output=True, text=True, timeout=60)
    assert diff.returncode == 1, diff.stderr
    report = json.loads(diff.stdout)
    assert report["firstMoveDifference"] is None and report["moves"]["original"] == report["moves"]["replay"] > 0, report
    look = next(p for p in report["looks"] if p["original"]["seq"] == seq)
    assert look["original"]["verdict"] == "mismatch" and look["replay"]["verdict"] == "match"
    assert [g["path"] for g in look["geometry"]] == [f"items[{item}].frame.y"] and look["timingNs"] is not None
    # A trace against itself (no replay marks: the whole file) lines up exactly.
    same = subprocess.run([crease, "trace", "diff", str(trace), str(trace), "--by-event"], capture_output=True, text=True, timeout=60)
    assert same.returncode == 0 and "every look gave the same verdict" in same.stdout, same.stdout + same.stderr
    missing = subprocess.run([crease, "trace", "diff", str(trace), str(sound_traces[-1]), "--by-event", "--run", "9"],
                             capture_output=True, text=True, timeout=60)
    assert missing.returncode == 2 and "no replay run 9" in missing.stderr, missing.stderr
    # A look the trace did not take is refused before anything is done.
    with pytest.raises(ReplayError, match="no look at seq"):
        _reproduce(creased_bin, tmp_path, trace, Target(seq=seq + 1000), 1, [], seed=1, name="absent")


def test_the_timing_plan_says_which_folds_a_motor_cannot_keep_up_with(tmp_path: Path) -> None:
    trace = tmp_path / "fast.jsonl"
    header = {"crease": "trace", "version": 4, "daemon": "test", "initial": {"seq": 0, "t": 0, "state": {"hingeAngle": 0}}}
    records = [header,
               {"seq": 1, "t": 1_000_000_000, "client": 1, "event": {"event": "hinge", "angle": 10}, "digest": "0"},
               {"seq": 2, "t": 1_005_000_000, "client": 1, "event": {"event": "hinge", "angle": 90}, "digest": "0"},
               {"seq": 3, "t": 1_010_000_000, "client": 1, "event": {"event": "hinge", "angle": 170}, "digest": "0"},
               {"seq": 4, "t": 6_000_000_000, "client": 1, "event": {"event": "keyboard", "visible": True}, "digest": "0"}]
    trace.write_text("".join(json.dumps(r) + "\n" for r in records))
    motor = load_rig_file(RIGS / "motor-rig.json")
    # The three readings are one fold of 170° (a motor's one move: 3.7 s on this rig), done
    # in the trace 10 ms after it began: too fast at speed 1, kept at a thousandth of it.
    warnings = timing_plan(read_trace(trace), motor, speed=1)
    assert len(warnings) == 1 and warnings[0].first == 1 and warnings[0].last == 3, warnings
    assert "a fold of 170.0° (17000°/s)" in str(warnings[0]) and warnings[0].needed == pytest.approx(0.3 + 0.02 * 170)
    assert warnings[0].wanted == pytest.approx(0.01) and warnings[0].late == pytest.approx(3.69)
    assert timing_plan(read_trace(trace), motor, speed=0.001) == []
    cut = tmp_path / "gap.jsonl"
    cut.write_text(json.dumps(header) + "\n" + json.dumps({"seq": 5, "t": 1, "gap": {"lost": 3}}) + "\n")
    with pytest.raises(ReplayError, match="gap"):
        read_trace(cut)


def _standin_process(creased_bin: str, fault: str) -> Tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen([sys.executable, "-m", "crease.rig_cli", "standin", "--app", APP, "--creased", creased_bin,
                                "--fault", fault, "--seed", "3"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    assert url.startswith("http://127.0.0.1:"), process.stderr.read() if process.stderr else ""
    return process, url


def test_crease_rig_reproduce_prints_the_rate_as_json_and_refuses_a_bad_target(creased_bin: str, tmp_path: Path) -> None:
    trace, seq, item = _record_a_mismatch(creased_bin, tmp_path)
    standin, url = _standin_process(creased_bin, f"intermittent:1:misplace:{item}:30")
    rig_daemon = Daemon.start(creased_bin, workdir=tmp_path / "rig-cli", args=["--app", APP])
    try:
        base = [sys.executable, "-m", "crease.rig_cli", "reproduce", str(trace), "--rig", str(SIMULATOR), "--appium", url,
                "--socket", rig_daemon.socket_path]
        run = subprocess.run(base + ["--runs", "3", "--seq", str(seq), "--speed", "20", "--json"], capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr
        summary = json.loads(run.stdout)
        assert summary["runs"] == 3 and summary["reproduced"] == 3 and [a["run"] for a in summary["at"]] == [1, 2, 3]
        # Each time it came back: the rig's seq and the daemon's clock when the device was looked at, in order.
        times = [a["t"] for a in summary["at"]]
        assert all(isinstance(t, int) and t > 0 for t in times) and times == sorted(times), summary["at"]
        assert len(summary["traces"]) == 3 and all(t["file"] and t["seq"][0] <= t["seq"][1] for t in summary["traces"])
        text = subprocess.run(base + ["--runs", "1", "--seq", str(seq), "--speed", "20"], capture_output=True, text=True, timeout=300)
        assert text.returncode == 0 and text.stdout.startswith("reproduced 1 of 1"), text.stdout + text.stderr
        bad = subprocess.run(base + ["--runs", "3", "--seq", str(seq), "--glitch", "mismatch"], capture_output=True, text=True, timeout=60)
        assert bad.returncode == 2 and "one of them" in bad.stderr
        fault = subprocess.run([sys.executable, "-m", "crease.rig_cli", "standin", "--fault", "intermittent:2:lag:5"],
                               capture_output=True, text=True, timeout=60)
        assert fault.returncode == 2 and "probability" in fault.stderr
    finally:
        rig_daemon.stop()
        standin.send_signal(signal.SIGTERM)
        standin.wait(timeout=30)


def test_a_glitch_that_needs_a_fast_fold_comes_back_at_the_recorded_speed_and_not_slowed(creased_bin: str, tmp_path: Path) -> None:
    """A device that draws a control low while the last fold was fast. The trace opens the
    hinge in 10° steps as fast as the rig goes and looks: at speed 1 the replay's fold is as
    fast and the mismatch comes back, with a warning that the rig file's fold takes longer; at
    a twentieth of the speed the fold is slow and the device is sound. The rate that counts as
    fast is set from how long the recorded fold took (between the recorded and the slowed
    rates, a factor of 4.5 from each), so a loaded machine changes nothing."""
    with _session(creased_bin, tmp_path, "fast") as session:
        rig, wda, client, recorder = session.rig, session.wda, session.client, session.rig_daemon
        rig.reset()
        began = time.monotonic()
        for angle in range(10, 100, 10):
            rig.perform({"event": "hinge", "angle": angle})
        took = time.monotonic() - began
        fast_rate = 90 / took / 20 ** 0.5
        item = next(i["id"] for b in client.layout()["bars"] for i in b["items"] if not i["id"].startswith("system."))
        wda.when_fast = [(fast_rate, "misplace", (item, 30.0))]
        look = rig.look()
        assert look["verdict"] == "mismatch", look
        seq = int(look["seq"])
    trace = recorder.trace_files()[-1]
    target = Target(seq=seq)
    # A rig file whose fold of 90° takes what lies between the recorded fold and the slowed one.
    rig_json = json.loads(SIMULATOR.read_text())
    rig_json["moves"]["hinge"] = {"fixed": 0, "perDegree": took * 20 ** 0.5 / 90}
    paced = tmp_path / "paced-rig.json"
    paced.write_text(json.dumps(rig_json))
    with _session(creased_bin, tmp_path, "again", rig_file=paced) as session:
        rig, wda, client, rig_daemon = session.rig, session.wda, session.client, session.rig_daemon
        wda.when_fast = [(fast_rate, "misplace", (item, 30.0))]
        fast = rig.reproduce(trace, runs=3, target=target, speed=1)
        slow = rig.reproduce(trace, runs=3, target=target, speed=0.05)
    assert fast.reproduced == 3, fast.json()
    assert slow.reproduced == 0, slow.json()
    assert any("a fold of 90.0°" in str(w) for w in fast.warnings), fast.warnings
    assert not any("fold" in str(w) for w in slow.warnings), slow.warnings


def test_a_repro_minimized_with_the_rig_file_survives_an_actuator_that_lands_half_a_degree_short(creased_bin: str, tmp_path: Path) -> None:
    """A control drawn low that only the opened phone shows: the trace opens the hinge to 60°
    and looks. Minimized without the rig file the repro opens it to exactly 23°, which an
    actuator landing 0.5° short turns into a closed phone: never reproduced. Minimized with
    ``--rig`` (a 1° tolerance) it opens to 24° and comes back every time."""
    crease = str(Path(creased_bin).with_name("crease"))
    with _session(creased_bin, tmp_path, "rec") as session:
        rig, wda, client, recorder = session.rig, session.wda, session.client, session.rig_daemon
        rig.reset()
        closed = {i["id"] for b in client.layout()["bars"] for i in b["items"]}
        for angle in (10, 30, 45, 60):
            rig.perform({"event": "hinge", "angle": angle})
        item = next(i["id"] for b in client.layout()["bars"] for i in b["items"]
                    if i["id"] not in closed and not i["id"].startswith("system."))
        wda.misplace[item] = 30
        look = rig.look()
        assert look["verdict"] == "mismatch", look
    trace = recorder.trace_files()[-1]
    subject = f"items[{item}]"
    rig_file = tmp_path / "rig.json"
    rig_json = json.loads(SIMULATOR.read_text())
    rig_json["moves"]["hinge"]["tolerance"] = 1
    rig_file.write_text(json.dumps(rig_json))
    bare, robust = tmp_path / "bare.jsonl", tmp_path / "robust.jsonl"
    for extra, out in (([], bare), (["--rig", str(rig_file)], robust)):
        run = subprocess.run([crease, "trace", "minimize", str(trace), "--glitch", "mismatch", "--subject", subject, *extra, "-o", str(out)],
                             capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr
    angles = {name: [s.event["angle"] for s in read_trace(path).steps if s.event and s.event.get("event") == "hinge"]
              for name, path in (("bare", bare), ("robust", robust))}
    assert angles == {"bare": [23], "robust": [24]}, angles
    looks = {name: next(s.seq for s in read_trace(path).steps if s.observed is not None) for name, path in (("bare", bare), ("robust", robust))}
    with _session(creased_bin, tmp_path, "short", rig_file=rig_file) as session:
        rig, wda, client, rig_daemon = session.rig, session.wda, session.client, session.rig_daemon
        wda.misplace[item] = 30
        wda.short = 0.5
        short_of_bare = rig.reproduce(bare, runs=3, target=Target(seq=looks["bare"]), speed=20)
        short_of_robust = rig.reproduce(robust, runs=3, target=Target(seq=looks["robust"]), speed=20)
    assert short_of_bare.reproduced == 0, short_of_bare.json()
    assert short_of_robust.reproduced == 3, short_of_robust.json()


def test_a_trace_with_compact_resets_and_looks_reads_as_a_replay_needs_it(tmp_path: Path) -> None:
    """A reset is recorded as ``"load":{}`` (the profile, app and default state kept) and a
    look that is exactly a view of its layout as ``observedAs``: the reader starts afresh at
    the reset and keeps the look, with the reference standing in for its observed object."""
    trace = tmp_path / "compact.jsonl"
    header = {"crease": "trace", "version": 4, "daemon": "test", "part": 0, "reason": "start", "app": {"name": "tabs"},
              "initial": {"seq": 0, "t": 0, "state": {"hingeAngle": 0}}}
    reference = {"view": "pageSource", "layout": "00000000000000aa", "digest": "00000000000000bb"}
    records = [header,
               {"seq": 1, "t": 10, "client": 1, "event": {"event": "hinge", "angle": 90}, "digest": "0"},
               {"seq": 2, "t": 20, "client": 1, "load": {}, "digest": "0"},
               {"seq": 3, "t": 30, "client": 1, "event": {"event": "hinge", "angle": 180}, "digest": "0"},
               {"seq": 3, "t": 40, "client": 1, "observe": {"cmd": "observe"}, "observedAs": reference, "verdict": "match",
                "layoutSeq": 3, "matchedSeq": 3, "differences": []}]
    trace.write_text("".join(json.dumps(r) + "\n" for r in records))
    recorded = read_trace(trace)
    assert [s.seq for s in recorded.steps] == [3, 3]
    assert recorded.steps[1].observed == {"observedAs": reference} and recorded.steps[1].verdict == "match"
    # A load of another app is not a reset: the phone cannot be put there.
    records[2] = {"seq": 2, "t": 20, "client": 1, "load": {"app": {"name": "other"}}, "digest": "0"}
    trace.write_text("".join(json.dumps(r) + "\n" for r in records))
    with pytest.raises(ReplayError, match="other than the start"):
        read_trace(trace)


def test_a_replay_on_the_phone_beside_its_original_in_one_report_with_both_devices_screenshots(creased_bin: str, tmp_path: Path) -> None:
    """``Rig(screenshots=DIR)`` keeps each look's screenshot as ``seq-SEQ.png``; ``crease report
    ORIGINAL --screenshots A --against REPLAY --against-screenshots B`` pictures the pair of
    looks that differ: the frame the model expected at the replay's look, and each device's
    screen (the original's with a control drawn 30 pt low, the replay's sound)."""
    original_shots, replay_shots = tmp_path / "original-shots", tmp_path / "replay-shots"
    original_shots.mkdir()
    replay_shots.mkdir()
    with _session(creased_bin, tmp_path, "original") as session:
        rig, wda, client = session.rig, session.wda, session.client
        rig.screenshots = str(original_shots)
        rig.reset()
        rig.perform({"event": "hinge", "angle": 90})
        assert rig.settle()["verdict"] == "match"
        item = next(i["id"] for b in client.layout()["bars"] for i in b["items"] if not i["id"].startswith("system."))
        wda.misplace[item] = 30
        mismatched = rig.look()
        assert mismatched["verdict"] == "mismatch", mismatched
    original = session.rig_daemon.trace_files()[-1]
    assert (original_shots / f"seq-{mismatched['seq']}.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    with _session(creased_bin, tmp_path, "replay") as session:
        session.rig.screenshots = str(replay_shots)
        result = session.rig.replay(original, speed=20)
    assert result.trace is not None and result.looks, result
    assert sorted(p.name for p in replay_shots.iterdir())
    crease = str(Path(creased_bin).with_name("crease"))
    page = tmp_path / "against.html"
    made = subprocess.run([crease, "report", str(original), "--screenshots", str(original_shots), "--against", result.trace,
                           "--against-screenshots", str(replay_shots), "-o", str(page)], capture_output=True, text=True, timeout=120)
    assert made.returncode == 0 and "pictured" in made.stderr, made.stderr
    html = page.read_text()
    pictured = html.split('<figure class="against-look"')[1:]
    assert pictured and all("<svg" in p for p in pictured)
    differing = [p for p in pictured if '<figure class="screenshot original">' in p and '<figure class="screenshot replay">' in p]
    assert differing, "the pair that differs shows both devices' screens"
    with pytest.raises(Exception, match="not a directory"):
        Rig(session.rig.driver, session.client, load_rig_file(SIMULATOR), screenshots=tmp_path / "none")
