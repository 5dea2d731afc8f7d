"""A client that outlives its daemon: creased killed mid-run and restarted with --resume."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import List

import pytest

from crease import Client, ConnectionClosed, Daemon, DaemonRestarted


def start(binary: str, sock: str, traces: Path) -> subprocess.Popen[bytes]:
    process = subprocess.Popen([binary, "--socket", sock, "--trace-dir", str(traces), "--resume", "--fsync", "always",
                                "--log-level", "warning"], stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(sock)
            return process
        except OSError:
            time.sleep(0.01)
        finally:
            probe.close()
    process.kill()
    raise RuntimeError("creased did not listen")


def test_a_restarted_daemon_is_found_again_and_nothing_is_resent(creased_daemon: Daemon, tmp_path: Path) -> None:
    binary = creased_daemon.binary
    sock = os.path.join(tempfile.mkdtemp(prefix="crease-"), "c.sock")
    traces = tmp_path / "traces"
    first = start(binary, sock, traces)
    try:
        rig = Client(sock, reconnect=True, timeout=30)
        watcher = rig.subscribe("layout")
        for angle in (10, 90, 180):
            last = rig.send({"event": "hinge", "angle": angle})
        last = rig.send({"event": "orientation", "value": "landscapeLeft"})
        acked_seq, acked_digest = last["seq"], last["digest"]
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
        second = start(binary, sock, traces)
        try:
            with pytest.raises(DaemonRestarted) as restarted:
                rig.send({"event": "keyboard", "visible": True})
            assert restarted.value.seq == acked_seq
            assert restarted.value.hello["digest"] == acked_digest
            assert restarted.value.hello["resumed"]["seq"] == acked_seq and rig.restarts == 1
            # The message was not sent: the daemon is where it was; sent now, it is the next seq.
            assert rig.sync()["seq"] == acked_seq
            assert rig.send({"event": "keyboard", "visible": True})["seq"] == acked_seq + 1
            # The subscription was renewed: the layout push of that change arrives.
            deadline = time.monotonic() + 30
            seqs: List[int] = []
            while acked_seq + 1 not in seqs and time.monotonic() < deadline:
                seqs += [p["seq"] for p in watcher.drain() if p.get("push") == "layout"]
                time.sleep(0.01)
            assert acked_seq + 1 in seqs

            # With a callback, the restart is reported there and the request goes on.
            seen: List[int] = []
            rig.on_restart = lambda hello: seen.append(hello["seq"])
            second.send_signal(signal.SIGTERM)
            second.wait(timeout=30)
            # The shutdown push ends what drain returns.
            assert any(p.get("push") == "shutdown" for p in watcher.drain())
            third = start(binary, sock, traces)
            try:
                assert rig.send({"event": "pip", "active": True})["seq"] == acked_seq + 2
                assert seen == [acked_seq + 1] and rig.restarts == 2
            finally:
                third.terminate()
                third.wait(timeout=30)
        finally:
            if second.poll() is None:
                second.terminate()
                second.wait(timeout=30)
    finally:
        if first.poll() is None:
            first.kill()
    # Without reconnect, a closed daemon stays an error.
    with pytest.raises((ConnectionClosed, FileNotFoundError, ConnectionRefusedError)):
        Client(sock, timeout=1).send({"event": "pip", "active": False})


def test_a_subscription_goes_on_with_the_daemon_the_client_reconnected_to(creased_daemon: Daemon, tmp_path: Path) -> None:
    """Issue 37: after the old daemon pushed shutdown and the client reconnected (renewing the
    subscription), get() raised "creased pushed shutdown" while drain() returned the new pushes."""
    binary = creased_daemon.binary
    sock = os.path.join(tempfile.mkdtemp(prefix="crease-"), "c.sock")
    traces = tmp_path / "traces"
    first = start(binary, sock, traces)
    seen: List[int] = []
    rig = Client(sock, reconnect=True, timeout=30, on_restart=lambda hello: seen.append(hello["seq"]))
    watcher = rig.subscribe("layout")
    assert watcher.get(timeout=30)["seq"] == 0  # the layout as subscribed
    rig.send({"event": "hinge", "angle": 90})
    assert watcher.get(timeout=30)["seq"] == 1
    first.terminate()
    first.wait(timeout=30)
    assert watcher.get(timeout=30)["push"] == "shutdown"
    second = start(binary, sock, traces)
    try:
        assert rig.send({"event": "hinge", "angle": 180})["seq"] == 2 and seen == [1]
        push = watcher.get(timeout=30)
        while push["seq"] < 2:
            push = watcher.get(timeout=30)
        assert push["push"] == "layout" and push["seq"] == 2
    finally:
        second.terminate()
        second.wait(timeout=30)
        rig.close()


def test_send_many_cut_by_a_kill_says_which_messages_were_answered(creased_daemon: Daemon, tmp_path: Path) -> None:
    """Issue 37: send_many interrupted by kill -9 raised and lost the replies already received,
    so a rig could not tell which events were acknowledged. SendInterrupted carries them."""
    from crease import SendInterrupted
    binary = creased_daemon.binary
    sock = os.path.join(tempfile.mkdtemp(prefix="crease-"), "c.sock")
    traces = tmp_path / "traces"
    process = start(binary, sock, traces)
    rig = Client(sock, timeout=30)
    answered = 0

    def events():  # type: ignore[no-untyped-def]
        nonlocal answered
        for i in range(200_000):
            if i == 5_000:
                # Well into the run, the daemon dies; what it answered before must be kept.
                process.send_signal(signal.SIGKILL)
                process.wait(timeout=30)
            yield {"event": "hinge", "angle": (i % 180) + 0.5}

    try:
        with pytest.raises(SendInterrupted) as cut:
            rig.send_many(events())
        replies = cut.value.replies
        answered = len(replies)
        assert 0 < answered <= cut.value.sent
        assert [r["seq"] for r in replies] == list(range(1, answered + 1))
        assert all(r["ok"] is True for r in replies)
        assert "answered before the connection broke" in str(cut.value)
    finally:
        if process.poll() is None:
            process.kill()
        rig.close()
    # Under --fsync always each answered event is on disk: a resumed daemon is at least there.
    again = start(binary, sock, traces)
    try:
        assert Client(sock, timeout=30).sync()["seq"] >= answered
    finally:
        again.terminate()
        again.wait(timeout=30)
