"""The client against a real creased (started by the plugin's fixtures)."""

from __future__ import annotations

import json
import math
import re
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

import crease
from crease import Client, CreaseError, Daemon


def test_socket_lookup_follows_the_daemon_order() -> None:
    lookup = crease.default_socket_path
    assert lookup({"CREASE_SOCKET": "/a.sock", "XDG_RUNTIME_DIR": "/run/user/7"}) == "/a.sock"
    assert lookup({"CREASE_SOCKET": "", "XDG_RUNTIME_DIR": "/run/user/7"}) == "/run/user/7/crease/creased.sock"
    assert lookup({"XDG_RUNTIME_DIR": ""}) == "/run/crease/creased.sock"
    assert lookup({}) == "/run/crease/creased.sock"


def test_client_without_path_uses_crease_socket(creased_daemon: Daemon, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CREASE_SOCKET", creased_daemon.socket_path)
    with Client() as client:
        assert client.path == creased_daemon.socket_path
        assert client.hello()["ok"] is True


def test_missing_socket_names_the_path(tmp_path: pytest.TempPathFactory) -> None:
    with pytest.raises(FileNotFoundError, match="no creased socket at .*nothing.sock"):
        Client(f"{tmp_path}/nothing.sock")


def test_event_reply_and_layout_agree(creased: Client) -> None:
    hello = creased.hello()
    assert hello["seq"] == 0 and hello["access"] == "publish"
    reply = creased.send({"event": "hinge", "angle": 180})
    assert reply["ok"] is True and reply["seq"] == 1 and reply["changed"] is True
    assert re.fullmatch(r"[0-9a-f]{16}", reply["digest"])
    assert isinstance(reply["latencyUs"], (int, float))
    layout = creased.layout()
    assert layout["seq"] == 1 and layout["digest"] == reply["digest"]
    assert layout["device"]["pose"] == "fullyOpen"
    state = creased.state()
    assert state["seq"] == 1 and state["state"]["hingeAngle"] == 180
    assert creased.sync()["digest"] == reply["digest"]


def test_caller_ids_are_echoed(creased: Client) -> None:
    assert creased.send({"event": "pip", "active": True, "id": "rig-7"})["id"] == "rig-7"
    assert creased.send({"cmd": "sync", "id": 12.0})["id"] == 12


def test_rejections_raise_with_code_field_and_message_and_change_nothing(creased: Client) -> None:
    before = creased.sync()
    with pytest.raises(CreaseError) as bad_angle:
        creased.send({"event": "hinge", "angle": 200})
    assert bad_angle.value.code == "outOfRange"
    assert bad_angle.value.field == "angle"
    assert "200" in bad_angle.value.message
    with pytest.raises(CreaseError) as typo:
        creased.send({"event": "keyboard", "visible": True, "heigth": 300})
    assert (typo.value.code, typo.value.field) == ("unknownField", "heigth")
    with pytest.raises(CreaseError) as unknown:
        creased.send({"event": "wobble"})
    assert (unknown.value.code, unknown.value.field) == ("unknownEvent", "event")
    with pytest.raises(CreaseError) as no_tab:
        creased.send({"event": "select", "tab": "nowhere"})
    assert (no_tab.value.code, no_tab.value.field) == ("unknownId", "tab")
    # The connection stays usable and the state did not move.
    after = creased.sync()
    assert (after["seq"], after["digest"]) == (before["seq"], before["digest"])


def test_a_line_too_long_is_answered_to_its_sender_and_ends_the_connection(creased: Client) -> None:
    with pytest.raises(CreaseError) as too_long:
        creased.send({"event": "select", "tab": "x" * 70_000})
    assert too_long.value.code == "lineTooLong" and too_long.value.id is None
    with pytest.raises(crease.ConnectionClosed):
        creased.sync()
    assert creased.closed


def test_send_many_pipelines_and_answers_in_order(creased: Client) -> None:
    events = [{"event": "hinge", "angle": (i * 7) % 181} for i in range(3000)]
    replies = creased.send_many(events)
    assert [r["seq"] for r in replies] == list(range(1, 3001))
    assert len({r["id"] for r in replies}) == 3000
    assert creased.layout()["digest"] == replies[-1]["digest"]
    assert creased.state()["state"]["hingeAngle"] == events[-1]["angle"]


def test_send_many_writes_a_paced_source_as_it_produces(creased_daemon: Daemon) -> None:
    """A generator paced at one event a millisecond once reached the daemon up to a second
    late: send_many gathered a chunk before writing. Each event carries its production time
    (CLOCK_MONOTONIC, as the daemon's) in ``ts``; the trace's read times say when it arrived."""
    def paced() -> Iterator[Dict[str, Any]]:
        for i in range(400):
            time.sleep(0.001)
            yield {"event": "hinge", "angle": 90 + (i % 2) * 0.5, "ts": time.monotonic_ns()}
    with creased_daemon.connect() as rig:
        rig.send_many(paced())
    creased_daemon.stop()
    lines = "".join(p.read_text() for p in creased_daemon.trace_files()).splitlines()
    origin = json.loads(lines[0])["monotonicOrigin"]
    delays = sorted((origin + r["t"] - r["event"]["ts"]) / 1e6
                    for r in map(json.loads, lines[1:]) if "event" in r and "ts" in r["event"])
    assert len(delays) == 400
    # Arrived within a few milliseconds of production (a loaded machine's scheduling aside),
    # not after the window of 1,024 had filled.
    assert delays[len(delays) // 2] < 20, delays[len(delays) // 2]
    assert delays[int(len(delays) * 0.9)] < 100, delays[int(len(delays) * 0.9)]


def test_rig_signals_as_rigs_have_them(creased_daemon: Daemon) -> None:
    """Radians, an encoder's overshoot, an IMU turning the device and the rotation lock,
    through the helpers; the trace replays them to the same digests."""
    with creased_daemon.connect() as rig:
        rig.hinge(math.pi, unit="rad")
        assert rig.state()["state"]["pose"] == "fullyOpen"
        assert rig.hinge(181.5)["ok"] and rig.state()["state"]["hingeAngle"] == 180
        with pytest.raises(CreaseError) as refused:
            rig.hinge(1.0, unit="grad")
        assert refused.value.field == "unit"
        # Turned to device landscapeLeft (gravity along -x) and held past the settle time.
        start = time.monotonic_ns()
        while time.monotonic_ns() - start < 300_000_000:
            rig.motion((-0.99, 0.02, -0.1))
            time.sleep(0.005)
        state = rig.state()["state"]
        assert state["deviceOrientation"] == "landscapeLeft" and state["orientation"] == "landscapeRight"
        assert rig.layout()["device"]["orientation"] == "landscapeRight"
        rig.rotation_lock(True)
        locked = rig.state()["state"]
        assert locked["orientation"] == "portrait" and locked["rotationLock"] is True
        with pytest.raises(CreaseError) as bad:
            rig.motion((0, -1, 99))
        assert bad.value.field == "gravity"
    creased_daemon.stop()
    traces = creased_daemon.trace_files()
    assert traces
    crease_cli = str(Path(creased_daemon.binary).with_name("crease"))
    verified = subprocess.run([crease_cli, "replay", "--verify", str(traces[-1])],
                              capture_output=True, text=True, timeout=60)
    assert verified.returncode == 0, verified.stdout + verified.stderr


def test_send_many_reports_the_failing_message(creased: Client) -> None:
    events = [{"event": "hinge", "angle": 90}, {"event": "hinge", "angle": -10}, {"event": "hinge", "angle": 100}]
    with pytest.raises(CreaseError) as failure:
        creased.send_many(events)
    assert failure.value.index == 1 and failure.value.code == "outOfRange"
    replies = creased.send_many(events, check=False)
    assert [r["ok"] for r in replies] == [True, False, True]
    assert replies[1]["error"]["field"] == "angle"
    # The rejected one took no seq: 2 applied in the first batch, 2 in the second.
    assert replies[2]["seq"] == 4


def test_replies_and_pushes_share_one_connection(creased: Client) -> None:
    layouts = creased.subscribe("layout")
    assert layouts.reply["topics"] == ["layout"]
    first = layouts.get(timeout=30)
    assert first["push"] == "layout" and first["seq"] == 0
    replies = creased.send_many([{"event": "hinge", "angle": a} for a in (90, 180, 90, 0, 180)])
    # Commands get their replies while pushes queue up; sync also publishes everything before it.
    assert creased.sync()["seq"] == 5
    pushes = [first] + layouts.drain()
    seqs = [p["seq"] for p in pushes]
    assert seqs == sorted(seqs) and len(seqs) > 1
    for push in pushes:
        assert push["layout"]["digest"] == push["digest"] and push["layout"]["seq"] == push["seq"]
    # Every pushed digest after the first is one an event reply announced, and the last is the current layout.
    assert {p["digest"] for p in pushes[1:]} <= {r["digest"] for r in replies}
    assert pushes[-1]["digest"] == creased.layout()["digest"] == replies[-1]["digest"]


def test_pushes_from_another_publisher(creased_daemon: Daemon) -> None:
    with creased_daemon.connect() as watcher, creased_daemon.connect() as rig:
        sub = watcher.subscribe("layout", "diagnostics")
        assert {p["push"] for p in (sub.get(timeout=30), sub.get(timeout=30))} == {"layout", "diagnostics"}
        reply = rig.send({"event": "orientation", "value": "landscapeLeft"})
        watcher.sync()  # every client's earlier events are published before this reply
        pushes = sub.drain()
        layouts = [p for p in pushes if p["push"] == "layout"]
        assert [(p["seq"], p["digest"]) for p in layouts] == [(reply["seq"], reply["digest"])]
        assert layouts[0]["layout"]["device"]["orientation"] == "landscapeLeft"
        assert all(p["seq"] == reply["seq"] for p in pushes)
        with pytest.raises(TimeoutError):
            sub.get(timeout=0.2)  # nothing else changed


def test_drain_returns_what_arrived_without_waiting(creased: Client) -> None:
    sub = creased.subscribe("layout")
    creased.send({"event": "hinge", "angle": 180})
    creased.sync()  # the push for seq 1 was written before this reply
    drained = sub.drain()
    assert [p["seq"] for p in drained] == [0, 1]
    assert sub.drain() == []


def test_a_thread_iterates_pushes_while_another_sends(creased: Client) -> None:
    sub = creased.subscribe("layout")
    pushes: List[crease.JSONObject] = []

    def watch() -> None:
        # The sender's last event is the only one that turns the device to landscapeRight.
        for push in sub:
            pushes.append(push)
            if push["layout"]["device"]["orientation"] == "landscapeRight":
                return

    watcher = threading.Thread(target=watch)
    watcher.start()
    creased.send_many([{"event": "hinge", "angle": a % 181} for a in range(0, 2000, 3)])
    for angle in (90, 180, 0):
        creased.send({"event": "hinge", "angle": angle})
        creased.sync()
    last = creased.send({"event": "orientation", "value": "landscapeRight"})
    watcher.join(120)
    assert not watcher.is_alive()
    seqs = [p["seq"] for p in pushes]
    assert seqs[0] == 0 and seqs == sorted(seqs) and seqs[-1] == last["seq"]
    assert pushes[-1]["digest"] == last["digest"]


def test_stats_mark_and_trace(creased_daemon: Daemon) -> None:
    with creased_daemon.connect() as rig:
        rig.send_many([{"event": "hinge", "angle": a} for a in (30, 60, 90)])
        stats = rig.stats()
        assert stats["events"] == 3 and stats["latency"]["count"] == 3
        mark = rig.mark("glitch: bar flickered at 90 degrees")
        assert mark["traced"] is True and mark["seq"] == 3
    creased_daemon.stop()
    trace = "".join(p.read_text() for p in creased_daemon.trace_files())
    assert '"mark":"glitch: bar flickered at 90 degrees"' in trace


def test_shutdown_ends_a_subscription(creased_daemon: Daemon) -> None:
    client = creased_daemon.connect()
    sub = client.subscribe("layout")
    assert sub.get(timeout=30)["seq"] == 0
    creased_daemon.stop()
    assert [p["push"] for p in sub] == ["shutdown"]
    with pytest.raises(crease.ConnectionClosed):
        client.sync()
    client.close()


@pytest.mark.creased_args("--app", "builtin:split")
def test_marker_passes_options_to_the_daemon(creased: Client) -> None:
    assert creased.layout()["columns"], "builtin:split has columns; the default app has none"


def test_observe_gives_every_verdict_and_the_conformance_topic_pushes_the_non_matches(creased_daemon: Daemon) -> None:
    with creased_daemon.connect() as rig, creased_daemon.connect() as watcher:
        pushes = watcher.subscribe("conformance")
        rig.send({"event": "hinge", "angle": 180})
        before = rig.layout()
        item = next(i for bar in before["bars"] for i in bar["items"] if i["id"] == "share")
        seen = {"barAxis": before["barAxis"], "items": [{"id": item["id"], "frame": item["frame"]}]}
        match = rig.observe(seen, tolerance=2, ts=1_700_000_123_000_000)
        assert (match["verdict"], match["layoutSeq"], match["matchedSeq"], match["differences"]) == \
            ("match", before["seq"], before["seq"], [])
        moved = {"items": [{"id": item["id"], "frame": {**item["frame"], "y": item["frame"]["y"] + 24}}]}
        mismatch = rig.observe(moved, ts=1_700_000_124_000_000)
        assert mismatch["verdict"] == "mismatch" and mismatch["matchedSeq"] is None
        assert [d["path"] for d in mismatch["differences"]] == [f"items[{item['id']}].frame.y"]
        # Right after a change the device may still show the layout before it: stale, within the settle window.
        rig.send({"event": "orientation", "value": "landscapeLeft"})
        stale = rig.observe({"barAxis": before["barAxis"], "verticalBarSide": before["verticalBarSide"]})
        assert stale["verdict"] == "stale" and stale["matchedSeq"] == before["seq"] and stale["differences"]
        watcher.sync()
        pushed = pushes.drain()
        assert [p["push"] for p in pushed] == ["conformance", "conformance"]
        assert [(p["verdict"], p["differences"]) for p in pushed] == \
            [("mismatch", mismatch["differences"]), ("stale", stale["differences"])]
        assert pushed[0]["ts"] == 1_700_000_124_000_000 and "ts" not in pushed[1]
        assert pushed[0]["client"] == pushed[1]["client"] == rig.hello()["client"]
        assert rig.stats()["observations"] == {"match": 1, "stale": 1, "mismatch": 1}
        with pytest.raises(CreaseError) as bad:
            rig.observe({"barAxis": "diagonal"})
        assert (bad.value.code, bad.value.field) == ("badValue", "observed.barAxis")


def test_glitches_topic_pushes_what_stats_counts(creased: Client) -> None:
    counted = sum(creased.stats()["glitches"].values())
    glitches = creased.subscribe("glitches")
    creased.send({"event": "hinge", "angle": 180})
    creased.send({"event": "keyboard", "visible": True})  # the built-in app's map scale bar goes under the keyboard
    creased.sync()
    pushed = glitches.drain()
    assert pushed and all(p["push"] == "glitches" for p in pushed)
    assert any(p["glitch"]["kind"] == "occluded" and p["glitch"]["subject"] == "mapScale" for p in pushed)
    for push in pushed:
        assert set(push["glitch"]) == {"kind", "subject", "seq", "t", "message"}
    assert sum(creased.stats()["glitches"].values()) == counted + len(pushed)


def test_subscriptions_on_one_client_keep_to_their_topics(creased: Client) -> None:
    layouts = creased.subscribe("layout")
    nonmatches = creased.subscribe("conformance")
    assert nonmatches.reply["topics"] == ["layout", "conformance"]
    creased.send({"event": "hinge", "angle": 180})
    verdict = creased.observe({"barAxis": "vertical"})["verdict"]  # the bars are horizontal now
    creased.sync()
    assert [p["push"] for p in layouts.drain()] == ["layout", "layout"]
    assert verdict != "match" and [p["verdict"] for p in nonmatches.drain()] == [verdict]


@pytest.mark.creased_args("--label", "rig=bench-3", "--label", "serial=F2LX91")
def test_labels_in_hello_and_stats(creased: Client) -> None:
    labels = creased.hello()["labels"]
    assert list(labels.items()) == [("rig", "bench-3"), ("serial", "F2LX91")]
    assert creased.stats()["labels"] == labels


def test_stats_reset_starts_the_counters_again(creased: Client) -> None:
    creased.send_many([{"event": "hinge", "angle": a} for a in (30, 60, 90)])
    closing = creased.stats(reset=True)
    assert closing["events"] == 3 and closing["latency"]["count"] == 3
    fresh = creased.stats()
    assert fresh["events"] == 0 and fresh["latency"]["count"] == 0 and fresh["rejected"] == 0
    assert fresh["periodS"] <= fresh["uptimeS"] and fresh["clients"] == 1
    creased.send({"event": "hinge", "angle": 120})
    assert creased.stats()["events"] == 1


@pytest.mark.creased_args("--allow-publish", "uid:2147483000")
def test_a_reader_may_not_reset_stats_or_load(creased: Client) -> None:
    assert creased.hello()["access"] == "read"
    assert creased.stats()["events"] == 0
    for call in (lambda: creased.stats(reset=True), lambda: creased.load()):
        with pytest.raises(CreaseError) as refused:
            call()
        assert refused.value.code == "forbidden"


def test_load_takes_the_state_as_state_returns_it(creased: Client) -> None:
    creased.send_many([{"event": "hinge", "angle": 180}, {"event": "orientation", "value": "landscapeLeft"}])
    saved, digest = creased.state(), creased.sync()["digest"]
    creased.send_many([{"event": "hinge", "angle": 0}, {"event": "pip", "active": True}])
    assert creased.sync()["digest"] != digest
    reply = creased.load(saved, digest=digest)
    assert (reply["seq"], reply["changed"], reply["digest"]) == (5, True, digest)
    assert creased.state()["state"] == saved["state"]
    assert creased.load(saved["state"])["changed"] is False  # the inner state works as well
    with pytest.raises(CreaseError) as wrong:
        creased.load(saved, digest="0000000000000000")
    assert (wrong.value.code, wrong.value.field) == ("digestMismatch", "digest")
    assert creased.sync()["seq"] == 6  # the refused load took no seq


def test_load_from_a_trace_header_returns_to_where_the_trace_begins(creased_daemon: Daemon) -> None:
    with creased_daemon.connect() as rig:
        rig.send_many([{"event": "hinge", "angle": 180}, {"event": "liveActivities", "count": 2}])
        begun = rig.command("trace", action="rotate")["trace"]
        header = _header_when_written(begun)
        rig.send_many([{"event": "hinge", "angle": 0}, {"event": "keyboard", "visible": True}])
        reply = rig.load(header=header)
        assert reply["digest"] == header["initial"]["digest"] and reply["changed"] is True
        assert rig.state()["state"] == header["initial"]["state"]
        assert rig.hello()["app"] == header["app"]["name"]


def test_a_trace_header_gives_its_monotonic_origin_or_none(creased_daemon: Daemon, tmp_path: Path) -> None:
    with creased_daemon.connect() as rig:
        begun = rig.command("trace", action="rotate")["trace"]
        header = _header_when_written(begun)
        origin = crease.trace_monotonic_origin(begun)
        assert isinstance(origin, int) and origin == header["monotonicOrigin"] and origin > 0
    without = dict(header)
    del without["monotonicOrigin"]
    (tmp_path / "old.jsonl").write_text(json.dumps(without) + "\n")
    assert crease.trace_monotonic_origin(tmp_path / "old.jsonl") is None
    (tmp_path / "not-a-trace.jsonl").write_text('{"seq":1}\n')
    with pytest.raises(ValueError):
        crease.trace_monotonic_origin(tmp_path / "not-a-trace.jsonl")


def _header_when_written(path: str) -> crease.JSONObject:
    """The header of a trace file the daemon's writer thread is beginning."""
    deadline = time.monotonic() + 60
    while True:
        try:
            with open(path, "rb") as f:
                if f.readline().endswith(b"\n"):
                    return crease.read_trace_header(path)
        except FileNotFoundError:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path} got no header within 60 s")
        time.sleep(0.01)


def test_a_rejected_event_without_an_id_names_its_line_and_ts(creased_daemon: Daemon) -> None:
    with creased_daemon.connect() as rig:
        rig.send({"event": "hinge", "angle": 90})
        with pytest.raises(CreaseError) as late:
            rig.send({"event": "hinge", "angle": 190, "ts": 2_004_838_030_659})
        assert (late.value.line, late.value.ts, late.value.code) == (2, 2_004_838_030_659, "outOfRange")
        assert late.value.message.endswith("got 190")
