"""Judging the device's screen frame by frame (``crease.frames``, ``crease-rig frames judge``):
the stand-in device's MJPEG stream and screen recordings through the real
Appium-Python-Client, with seeded screen faults the judge is held to by the stand-in's own
list of what it injected (``GET /standin/faults``), against the device daemon's real trace."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List

import pytest
from appium import webdriver
from appium.options.ios import XCUITestOptions

from crease import Client, Daemon, load_rig_file
from crease.frames.judge import FrameJudge, JudgeOptions
from crease.frames.live import Judgement, judge_frames
from crease.frames.sources import align_recording, describe_recording, recording_frames
from crease.frames.timeline import Timeline, read_timeline
from crease.rig import Rig, read_tour
from crease.wda_standin import StandInWDA

RIGS = Path(__file__).resolve().parents[3] / "docs" / "rigs"
SIMULATOR = RIGS / "simulator.json"
APP = "builtin:tabs"
FRAME_NS = 1_000_000_000 // 60 + 1
#: How long the fault-free tour is watched (CREASE_FRAMES_MINUTES=10 for the ten-minute run).
MINUTES = float(os.environ.get("CREASE_FRAMES_MINUTES", "0.4"))


@dataclass
class Phone:
    wda: StandInWDA
    device: Client
    rig: Rig
    trace: Path
    driver: Any

    def faults(self) -> List[Dict[str, Any]]:
        with urllib.request.urlopen(f"{self.wda.url}/standin/faults", timeout=10) as answer:
            value: List[Dict[str, Any]] = json.loads(answer.read())["value"]
        return value


@contextmanager
def _phone(creased_bin: str, tmp_path: Path, name: str) -> Iterator[Phone]:
    """The stand-in (its device daemon recording a trace), the rig's creased and a Rig, with
    the stream at 60 fps and a quarter of the @3x size, as a lab sets WebDriverAgent up."""
    phone = Daemon.start(creased_bin, workdir=tmp_path / f"phone-{name}", args=["--app", APP])
    rig_daemon = Daemon.start(creased_bin, workdir=tmp_path / f"rig-{name}", args=["--app", APP], trace=False)
    try:
        with phone.connect() as device, rig_daemon.connect() as client, StandInWDA(device) as wda:
            driver = webdriver.Remote(command_executor=wda.url, options=XCUITestOptions())
            try:
                driver.update_settings({"mjpegServerFramerate": 60, "mjpegScalingFactor": 25})
                trace = Path(device.stats()["trace"]["file"])
                yield Phone(wda, device, Rig(driver, client, load_rig_file(SIMULATOR)), trace, driver)
            finally:
                driver.quit()
    finally:
        rig_daemon.stop()
        phone.stop()


def _crease(creased_bin: str) -> str:
    return str(Path(creased_bin).with_name("crease"))


def _moves(rig: Rig, pause: float = 0.5) -> None:
    """Folds within a pose (the layout stays), across poses, the keyboard and a turn."""
    for event in ({"event": "hinge", "angle": 90}, {"event": "hinge", "angle": 100}, {"event": "keyboard", "visible": True},
                  {"event": "keyboard", "visible": False}, {"event": "hinge", "angle": 180}, {"event": "hinge", "angle": 170},
                  {"event": "keyboard", "visible": True}, {"event": "keyboard", "visible": False},
                  {"event": "orientation", "value": "landscapeLeft", "convention": "device"},
                  {"event": "orientation", "value": "portrait", "convention": "device"}, {"event": "hinge", "angle": 0}):
        rig.perform(event)
        time.sleep(pause)


def _watched(phone: Phone, run: Callable[[], None]) -> Judgement:
    """``run`` with the MJPEG stream watched, then the frames judged against the device trace."""
    # The stand-in's stream, found as a rig finds it (its /status), timed on the device trace.
    with phone.rig.watch_frames(trace=phone.trace) as recorder:
        time.sleep(0.3)
        run()
        time.sleep(0.8)
    assert recorder.error is None
    # The pictures went to the spool: in memory, one picture and a few bytes a frame.
    largest = max(len(f.data or b"") for f in recorder.frames())
    assert recorder.spooled_bytes >= largest and recorder.held_bytes <= largest + 32 * recorder.count
    phone.device.sync()
    timeline = read_timeline(phone.trace, str(Path(os.environ["CREASE_BIN"]).with_name("crease")))
    judgement = judge_frames(recorder.frames(), timeline, alignment=recorder.alignment())
    recorder.close()
    return judgement


def _time_of(timeline: Timeline, seq: int) -> int:
    return next(m.t for m in timeline.layouts if m.seq == seq)


@pytest.fixture(autouse=True)
def _crease_bin_env(creased_bin: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CREASE_BIN", creased_bin)


def test_a_fault_free_tour_watched_live_flags_no_frame(creased_bin: str, plan_tour: Callable[[Path, str, int], Path],
                                                      tmp_path: Path) -> None:
    steps = read_tour(plan_tour(tmp_path / "tour.jsonl", APP, 3))
    with _phone(creased_bin, tmp_path, "sound") as phone:
        def tour() -> None:
            end = time.monotonic() + MINUTES * 60
            while True:
                phone.rig.run(steps)
                if time.monotonic() >= end:
                    return
                phone.rig.reset()
        judgement = _watched(phone, tour)
        assert phone.faults() == []
    summary = judgement.summary
    print(f"fault-free run: {MINUTES} min, {summary['frames']} frames, {len(judgement.flags)} flagged, "
          f"{summary['superseded']} superseded and {summary['dropped']} dropped windows")
    assert summary["frames"] >= MINUTES * 60 * 60 * 0.8, summary
    assert judgement.flags == [], [f.json() for f in judgement.flags]
    # Every relayout was seen and none was late (the stand-in's own hand-off is its latency).
    assert summary["relayoutMs"]["count"] > 0 and summary["unseen"] == 0 and summary["relayoutMs"]["p99"] < 250, summary
    # creased's own relayout latency from the same trace, beside the device's.
    own = summary["creasedRelayoutUs"]
    assert own["count"] >= summary["relayoutMs"]["count"] and 0 < own["p50"] <= own["p99"], summary
    assert summary["alignment"]["how"] == "the stream's capture time of each frame"


@pytest.mark.parametrize("fault", ["flash", "lag", "drift"])
def test_each_injected_screen_fault_is_flagged_once_at_its_time_and_seq(creased_bin: str, tmp_path: Path, fault: str) -> None:
    with _phone(creased_bin, tmp_path, fault) as phone:
        if fault == "flash":
            phone.wda.screen.flash_probability = 1.0
        elif fault == "lag":
            phone.wda.screen.lag_ns = 400_000_000
        else:
            phone.wda.screen.drift = ("search", 30.0)
        judgement = _watched(phone, lambda: _moves(phone.rig, pause=0.7))
        faults = phone.faults()
        timeline = read_timeline(phone.trace, _crease(creased_bin))
        # The verdicts go into the trace as frame records, which the trace tools read back.
        assert judgement.record(phone.device) == len(judgement.flags)
        phone.device.sync()
    # A control drifting during a fold moves pixels the model did not: the device's layout shift measures it.
    assert fault != "drift" or judgement.layout_shift_windows > 0, judgement.summary["layoutShift"]
    _check_frame_records(creased_bin, phone.trace, judgement)
    kind = {"flash": "flash", "lag": "lateRelayout", "drift": "unexpectedMotion"}[fault]
    assert faults and all(f["kind"] == kind for f in faults), faults
    flags = [f for f in judgement.flags]
    assert sorted(f.kind for f in flags) == [kind] * len(faults), ([f.json() for f in flags], faults)
    for injected in faults:
        found = [f for f in flags if f.seq == injected["seq"]]
        assert len(found) == 1, (injected, [f.json() for f in flags])
        assert 0 <= found[0].t - injected["t"] <= FRAME_NS, (injected, found[0].json())
        if fault == "lag":
            # The device showed it 400 ms (and the stand-in's own hand-off) after the model:
            # the judge measures that to within one frame.
            shown_after = (injected["t"] - _time_of(timeline, injected["seq"])) / 1e6
            assert shown_after >= 400
            relayout = found[0].relayout_ms
            assert relayout is not None and 0 <= relayout - shown_after <= FRAME_NS / 1e6, (relayout, shown_after)
    if fault == "lag":
        assert judgement.summary["relayoutMs"]["p50"] >= 400


def _check_frame_records(creased_bin: str, trace: Path, judgement: Judgement) -> None:
    crease = _crease(creased_bin)
    info = json.loads(subprocess.run([crease, "trace", "info", str(trace), "--json"], capture_output=True, text=True,
                                     check=True, timeout=120).stdout)
    # The flagged frames by kind, and the device's layout-shift windows as measurements.
    frames = dict(info["frames"])
    assert frames.pop("layoutShift") == judgement.layout_shift_windows, info["frames"]
    assert frames == judgement.summary["byKind"], info["frames"]
    assert subprocess.run([crease, "replay", str(trace), "--verify"], capture_output=True, timeout=120).returncode == 0
    glitches = subprocess.run([crease, "trace", "glitches", str(trace), "--json"], capture_output=True, text=True, timeout=120)
    screen = [json.loads(line) for line in glitches.stdout.splitlines() if '"screen"' in line]
    assert glitches.returncode == 1 and sorted((g["subject"], g["seq"][0]) for g in screen) == \
        sorted((f.kind, f.seq) for f in judgement.flags), glitches.stdout
    # Above a threshold, each device window is a layoutShift glitch of subject "device", as the model's are of "layout".
    shifted = subprocess.run([crease, "trace", "glitches", str(trace), "--layout-shift", "0", "--json"], capture_output=True, text=True, timeout=120)
    device = [json.loads(line) for line in shifted.stdout.splitlines() if '"layoutShift"' in line and '"device"' in line]
    windows = judgement.summary["layoutShift"]["device"]["windows"]
    assert len(device) == len([w for w in windows if w["score"] > 0]), shifted.stdout


def test_a_screen_recording_judged_offline_gives_the_live_streams_verdicts(creased_bin: str, tmp_path: Path) -> None:
    with _phone(creased_bin, tmp_path, "recorded") as phone:
        phone.wda.screen.flash_probability = 1.0
        phone.wda.screen.drift = ("search", 30.0)
        recording = tmp_path / "screen.mp4"

        def recorded_moves() -> None:
            phone.driver.start_recording_screen(videoFps=60)
            _moves(phone.rig, pause=0.6)
            recording.write_bytes(base64.b64decode(phone.driver.stop_recording_screen()))
        live = _watched(phone, recorded_moves)
        faults = phone.faults()
    timeline = read_timeline(phone.trace, _crease(creased_bin))
    info = describe_recording(str(recording))
    assert info["fps"] == 60 and "firstFrameMonotonicNs" in info["tag"]
    first, how = align_recording(info, timeline.origin_ns)
    offline = judge_frames(recording_frames(str(recording), info, first), timeline)
    assert len(faults) >= 3
    seen = lambda j: sorted((f.kind, f.seq) for f in j.flags)  # noqa: E731
    assert seen(live) == seen(offline) == sorted((f["kind"], f["seq"]) for f in faults)
    for a, b in zip(sorted(live.flags, key=lambda f: (f.kind, f.seq)), sorted(offline.flags, key=lambda f: (f.kind, f.seq))):
        assert abs(a.t - b.t) <= FRAME_NS, (a.json(), b.json())
    # The command line says the same, one line a flagged frame and a summary, and exits 1.
    strips = tmp_path / "strips"
    judged = subprocess.run([sys.executable, "-m", "crease.rig_cli", "frames", "judge", str(recording), "--trace", str(phone.trace),
                             "--json", "--filmstrip", str(strips)], capture_output=True, text=True, timeout=300)
    assert judged.returncode == 1, judged.stderr
    lines = [json.loads(line) for line in judged.stdout.splitlines()]
    assert sorted((line["kind"], line["seq"]) for line in lines[:-1]) == seen(offline)
    summary = lines[-1]
    assert set(summary) >= {"frames", "flagged", "byKind", "relayoutMs"} and summary["flagged"] == len(offline.flags)
    assert summary["alignment"]["how"] == how
    # A picture a flag: the frames around it beside the expected picture.
    assert sorted(p.name for p in strips.iterdir()) == sorted(f"{f.frame}-{f.kind}.png" for f in offline.flags)


def test_the_judge_refuses_bad_sources_with_exit_2_and_a_reason(creased_bin: str, tmp_path: Path) -> None:
    with _phone(creased_bin, tmp_path, "bad") as phone:
        phone.rig.perform({"event": "hinge", "angle": 90})
        phone.device.sync()
        trace = phone.trace
    not_video = tmp_path / "notes.mp4"
    not_video.write_text("not a video")
    frames = tmp_path / "frames"
    frames.mkdir()
    (frames / "first.png").write_bytes(b"")
    fifo = tmp_path / "fifo.mp4"
    os.mkfifo(fifo)
    for source, trace_arg, reason in ((str(not_video), str(trace), "not a recording"),
                                      (str(frames), str(trace), "named T.png"),
                                      (str(fifo), str(trace), "not a regular file"),
                                      (str(not_video), str(tmp_path / "missing.jsonl"), "No such file"),
                                      ("ftp://example/stream", str(trace), "http:// URL")):
        judged = subprocess.run([sys.executable, "-m", "crease.rig_cli", "frames", "judge", source, "--trace", trace_arg],
                                capture_output=True, text=True, timeout=120)
        assert judged.returncode == 2 and reason in judged.stderr, (source, judged.stderr)


def test_noise_below_the_learnt_threshold_is_not_motion(creased_bin: str, tmp_path: Path) -> None:
    """A real screen is never still to the bit: frames with noise of a few grey levels where
    the model changed nothing raise the threshold instead of flagging."""
    import numpy as np
    from crease.frames.sources import Frame
    with _phone(creased_bin, tmp_path, "noise") as phone:
        phone.rig.perform({"event": "hinge", "angle": 90})
        phone.device.sync()
        timeline = read_timeline(phone.trace, _crease(creased_bin))
    rng = np.random.default_rng(7)
    base = np.full((340, 335), 121, dtype=np.int16)
    start = timeline.layouts[-1].t + 10 ** 9
    judge = FrameJudge(timeline, JudgeOptions())
    flagged: List[Any] = []
    for k in range(240):
        noisy = np.clip(base + rng.integers(-6, 7, size=base.shape), 0, 255).astype(np.uint8)
        flagged += judge.feed(Frame(index=k, t=start + k * FRAME_NS, gray=noisy, ppp=0.5))
    flagged += judge.finish()
    assert flagged == [] and judge.summary()["noiseThreshold"] >= 16
    # A real move after that is still seen.
    moved = base.copy()
    moved[100:130, 100:130] = 20
    judge.feed(Frame(index=240, t=start + 240 * FRAME_NS, gray=moved.astype(np.uint8), ppp=0.5))
    for k in range(241, 250):
        judge.feed(Frame(index=k, t=start + k * FRAME_NS, gray=moved.astype(np.uint8), ppp=0.5))
    judge.finish()
    assert [f.kind for f in judge.flags] == ["unexpectedMotion"], [f.json() for f in judge.flags]



def test_the_streams_delay_is_calibrated_with_a_known_change_and_written_into_the_rig_file(creased_bin: str, tmp_path: Path) -> None:
    from crease.frames.calibrate import calibrate_delay, write_delay
    with _phone(creased_bin, tmp_path, "calibrate") as phone:
        # A screen 150 ms behind the device: the stream's frames of a change come that late.
        phone.wda.screen.lag_ns = 150_000_000
        shown = [False]

        def toggle() -> None:
            shown[0] = not shown[0]
            phone.rig.perform({"event": "keyboard", "visible": shown[0]})
        assert phone.wda.mjpeg_url is not None
        delay = calibrate_delay(phone.wda.mjpeg_url, toggle, repeats=3)
    assert 150 - FRAME_NS / 1e6 <= delay <= 150 + 4 * FRAME_NS / 1e6, delay
    rig = tmp_path / "rig.json"
    rig.write_text(SIMULATOR.read_text())
    write_delay(str(rig), delay)
    assert load_rig_file(rig).device["frames"]["delayMs"] == delay
    link = tmp_path / "link.json"
    link.symlink_to(rig)
    with pytest.raises(ValueError, match="not a regular file"):
        write_delay(str(link), 1.0)
    assert link.is_symlink()


def test_the_stand_in_answers_a_screenshot_with_what_its_screen_shows(creased_bin: str, tmp_path: Path) -> None:
    """Appium's ``get_screenshot_as_png`` (WebDriverAgent's ``GET /screenshot``): a PNG of the
    screen at the @3x scale, which changes when the layout does."""
    import io

    from PIL import Image

    with _phone(creased_bin, tmp_path, "shot") as phone:
        closed = phone.driver.get_screenshot_as_png()
        phone.rig.perform({"event": "hinge", "angle": 180})
        phone.device.sync()
        time.sleep(0.1)
        opened = phone.driver.get_screenshot_as_png()
        layout = phone.device.layout()
    assert closed.startswith(b"\x89PNG\r\n\x1a\n") and opened != closed
    picture = Image.open(io.BytesIO(opened))
    assert picture.size == (round(layout["device"]["width"] * 3), round(layout["device"]["height"] * 3))
