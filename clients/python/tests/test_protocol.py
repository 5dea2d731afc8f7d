"""The line protocol without a socket: ids, framing, and matching replies and pushes."""

from __future__ import annotations

import json

import pytest

from crease.protocol import CONNECTION_LOST, Protocol, key_of


def line(message: object) -> bytes:
    return (json.dumps(message) + "\n").encode()


def test_every_request_gets_an_id_and_the_daemon_s_canonical_echo_matches_it() -> None:
    p = Protocol()
    first, encoded = p.request({"event": "hinge", "angle": 90})
    assert json.loads(encoded) == {"event": "hinge", "angle": 90, "id": 1}
    assert encoded.endswith(b"\n") and encoded.count(b"\n") == 1
    given, _ = p.request({"cmd": "sync", "id": 7.0})
    # The daemon writes 7.0 as 7; True is not 1.
    p.feed(line({"ok": True, "id": 7}))
    assert p.take_reply(given) == {"ok": True, "id": 7}
    assert key_of(True) != key_of(1) and key_of(1) == key_of(1.0)
    # The next id skips one the caller gave and still awaits.
    p.request({"cmd": "sync", "id": 2})
    third, encoded = p.request({"cmd": "sync"})
    assert json.loads(encoded)["id"] == 3
    assert p.take_reply(first) is None and p.take_reply(third) is None


def test_an_id_awaited_twice_is_refused_and_a_message_must_be_an_object() -> None:
    p = Protocol()
    p.request({"cmd": "sync", "id": "a"})
    with pytest.raises(ValueError, match="already awaiting"):
        p.request({"cmd": "sync", "id": "a"})
    with pytest.raises(TypeError, match="not list"):
        p.request([1, 2])  # type: ignore[arg-type]


def test_lines_cut_anywhere_by_reads_are_filed_once_whole() -> None:
    p = Protocol()
    key, _ = p.request({"cmd": "hello"})
    data = line({"push": "layout", "seq": 1}) + line({"ok": True, "id": 1, "daemon": "creased"})
    for cut in range(1, len(data)):
        q = Protocol()
        k, _ = q.request({"cmd": "hello"})
        assert q.feed(data[:cut]) == (data[:cut].count(b"\n") > 0)
        q.feed(data[cut:])
        assert q.take_reply(k) == {"ok": True, "id": 1, "daemon": "creased"}
        assert q.take_pushes(("layout",)) == [{"push": "layout", "seq": 1}]
    assert p.feed(data) and p.take_reply(key) is not None


def test_replies_and_pushes_interleave_and_topics_are_taken_apart() -> None:
    p = Protocol()
    a, _ = p.request({"event": "hinge", "angle": 1})
    b, _ = p.request({"event": "hinge", "angle": 2})
    p.feed(line({"push": "layout", "seq": 1}) + line({"ok": True, "id": 2}) + line({"push": "stats", "n": 1})
           + line({"push": "layout", "seq": 2}) + line({"ok": True, "id": 1}))
    assert p.take_reply(b) == {"ok": True, "id": 2} and p.take_reply(a) == {"ok": True, "id": 1}
    assert p.take_reply(a) is None, "a reply is taken once"
    assert p.take_push(("layout",)) == {"push": "layout", "seq": 1}
    assert p.take_pushes(("stats",)) == [{"push": "stats", "n": 1}]
    assert p.take_pushes(("layout",)) == [{"push": "layout", "seq": 2}]
    assert p.take_push(("layout", "stats")) is None


def test_a_reply_without_an_id_answers_the_oldest_request_still_awaited() -> None:
    p = Protocol()
    a, _ = p.request({"cmd": "sync"})
    b, _ = p.request({"cmd": "sync"})
    c, _ = p.request({"cmd": "sync"})
    p.feed(line({"ok": True, "id": 1}))
    p.forget(b)  # given up on (a timeout)
    bad = {"ok": False, "error": {"code": "badJSON", "message": "not JSON"}}
    p.feed(line(bad))
    assert p.take_reply(a) == {"ok": True, "id": 1}
    assert p.take_reply(c) == bad and p.refusal is None
    # With nothing awaited, it says why the daemon is closing.
    p.feed(line({"ok": False, "error": {"code": "accessDenied", "message": "uid 1000 may not connect"}}))
    assert p.refusal == "accessDenied: uid 1000 may not connect"


def test_a_late_reply_to_a_request_given_up_on_is_dropped() -> None:
    p = Protocol()
    a, _ = p.request({"cmd": "sync"})
    p.forget(a)
    p.feed(line({"ok": True, "id": 1}))
    assert p.take_reply(a) is None
    b, encoded = p.request({"cmd": "sync"})
    assert json.loads(encoded)["id"] == 2


def test_the_shutdown_push_is_kept_apart_and_a_restart_fails_what_was_awaited() -> None:
    p = Protocol()
    a, _ = p.request({"event": "hinge", "angle": 3})
    p.feed(line({"push": "shutdown", "reason": "SIGTERM"}) + b'{"ok":tr')
    assert p.shutdown == {"push": "shutdown", "reason": "SIGTERM"}
    assert p.take_pushes(("shutdown",)) == []
    p.restart()
    assert p.take_reply(a) == CONNECTION_LOST, "never re-sent silently: it may or may not have been applied"
    assert p.shutdown is None
    # The half line belonged to the old connection.
    b, _ = p.request({"cmd": "hello"})
    p.feed(line({"ok": True, "id": 2}))
    assert p.take_reply(b) == {"ok": True, "id": 2}
