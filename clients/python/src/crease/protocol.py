"""creased's line protocol without a socket: ids, line framing, and matching what the
daemon writes to what was asked.

Every message sent carries an ``id`` (the caller's, or one given here), so every message
gets exactly one reply, matched by id. Lines that carry ``"push"`` (and no ``"ok"``) are
pushes, kept for the subscriptions; the ``shutdown`` push is kept apart. A reply without an
id answers the oldest request still awaited (the daemon writes one only for a line it
could not read); with none awaited it explains why the daemon is about to close the
connection. :class:`Protocol` holds that state and does no I/O and no locking: the
transport (:class:`crease.Client`) feeds it the bytes it reads and writes the lines it
encodes, under its own lock.
"""

from __future__ import annotations

import json
from collections import deque
from typing import Any, Deque, Dict, List, Mapping, Optional, Tuple

JSONObject = Dict[str, Any]
Key = Tuple[str, Any]

encode_json = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode
decode_json = json.JSONDecoder().decode


class CreaseError(Exception):
    """The daemon answered ``"ok": false``: ``code`` (``outOfRange``, ``unknownField`` …),
    ``field`` (the offending field's path, or None), ``message``; ``reply`` is the
    whole reply, ``id`` its id, ``line`` the rejected line's number on the connection
    and ``ts`` the rejected event's own ``ts`` (each None when the reply has none). ``send_many`` also sets ``index``: which message
    of the batch failed."""

    def __init__(self, reply: JSONObject, index: Optional[int] = None) -> None:
        error = reply.get("error")
        details: JSONObject = error if isinstance(error, dict) else {}
        self.code: str = str(details.get("code", "unknown"))
        self.message: str = str(details.get("message", ""))
        field = details.get("field")
        self.field: Optional[str] = field if isinstance(field, str) else None
        self.id: Any = reply.get("id")
        line = reply.get("line")
        self.line: Optional[int] = line if isinstance(line, int) else None
        ts = reply.get("ts")
        self.ts: Optional[int] = ts if isinstance(ts, int) else None
        self.reply: JSONObject = reply
        self.index: Optional[int] = index
        super().__init__(str(self))

    def __str__(self) -> str:
        where = f" (field {self.field})" if self.field else ""
        which = f" [message {self.index}]" if self.index is not None else ""
        return f"{self.code}: {self.message}{where}{which}"


def key_of(value: Any) -> Key:
    """A hashable key under which an id and its echo compare equal (the daemon writes
    numbers in canonical form, so 1.0 comes back as 1; True is not 1)."""
    kind = type(value)  # exact types first: this runs twice per message
    if kind is int or kind is float:
        return ("n", float(value))
    if kind is str:
        return ("s", value)
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, (int, float)):
        return ("n", float(value))
    if isinstance(value, str):
        return ("s", value)
    return ("j", encode_json(value))


#: The reply a request gets when the connection broke before its answer came.
CONNECTION_LOST: JSONObject = {"ok": False, "error": {
    "code": "connectionClosed",
    "message": "creased went away before replying: the message may or may not have been applied"}}


class Protocol:
    """The state of one connection's conversation: requests awaiting replies (in the
    order sent), replies filed and not yet taken, pushes, the ``shutdown`` push, the bytes
    of a line not yet complete, and why the daemon said it would close."""

    def __init__(self) -> None:
        self._replies: Dict[Key, Optional[JSONObject]] = {}  # awaited ids; None until answered
        self._order: Deque[Key] = deque()  # awaited ids in the order sent
        self._pushes: Deque[JSONObject] = deque()
        self._partial = bytearray()
        self._next_id = 1
        #: The ``shutdown`` push, once the daemon sent it.
        self.shutdown: Optional[JSONObject] = None
        #: What a reply without an id, with nothing awaited, said (a refused peer).
        self.refusal: Optional[str] = None

    # -- sending

    def request(self, message: Mapping[str, Any]) -> Tuple[Key, bytes]:
        """Gives ``message`` an id when it has none, registers the id as awaited and
        returns its key and the encoded line. ValueError when the id is already awaited."""
        if type(message) is not dict and not isinstance(message, Mapping):
            raise TypeError(f"a message is a mapping (a JSON object), not {type(message).__name__}")
        given = message.get("id")
        if given is None:
            while ("n", float(self._next_id)) in self._replies:
                self._next_id += 1
            ident: Any = self._next_id
            self._next_id += 1
            message = {**message, "id": ident}
        else:
            ident = given
        key = key_of(ident)
        if key in self._replies:
            raise ValueError(f"id {ident!r} is already awaiting a reply on this connection")
        line = (encode_json(message) + "\n").encode()
        self._replies[key] = None
        self._order.append(key)
        return key, line

    def forget(self, key: Key) -> None:
        """Stops awaiting ``key`` (never sent, or given up on); a late reply is dropped."""
        self._replies.pop(key, None)

    # -- receiving

    def feed(self, data: bytes) -> bool:
        """Files every complete line of what was read; returns whether any line was filed.
        A line cut by the read waits for the rest."""
        buf = self._partial
        buf += data
        end = buf.rfind(b"\n")
        if end < 0:
            return False
        lines = bytes(buf[:end]).split(b"\n")
        del buf[:end + 1]
        filed = False
        for line in lines:
            if line.strip():
                self.file(decode_json(line.decode()))
                filed = True
        return filed

    def file(self, message: JSONObject) -> None:
        """Files one message from the daemon: a push, a reply by its id, or a reply without one."""
        if "push" in message and "ok" not in message:
            if message["push"] == "shutdown":
                self.shutdown = message
            else:
                self._pushes.append(message)
            return
        if "id" in message:
            key = key_of(message["id"])
            if key in self._replies and self._replies[key] is None:
                self._replies[key] = message
            # else: the reply to a request given up on; nobody awaits it.
            order = self._order
            while order and (order[0] not in self._replies or self._replies[order[0]] is not None):
                order.popleft()
            return
        while self._order:
            key = self._order.popleft()
            if key in self._replies and self._replies[key] is None:
                self._replies[key] = message
                return
        if message.get("ok") is False:
            self.refusal = str(CreaseError(message))

    # -- taking what came

    def take_reply(self, key: Key) -> Optional[JSONObject]:
        """The reply to ``key`` if it came (it is then no longer awaited), else None."""
        reply = self._replies.get(key)
        if reply is None:
            return None
        del self._replies[key]
        return reply

    def take_push(self, topics: Tuple[str, ...]) -> Optional[JSONObject]:
        """The oldest push of ``topics`` not yet taken, or None."""
        for i, push in enumerate(self._pushes):
            if push.get("push") in topics:
                del self._pushes[i]
                return push
        return None

    def take_pushes(self, topics: Tuple[str, ...]) -> List[JSONObject]:
        """Every push of ``topics`` not yet taken, in order."""
        taken = [p for p in self._pushes if p.get("push") in topics]
        if taken:
            kept = [p for p in self._pushes if p.get("push") not in topics]
            self._pushes.clear()
            self._pushes.extend(kept)
        return taken

    # -- a new connection

    def restart(self) -> None:
        """The connection was replaced: every request still awaited gets
        :data:`CONNECTION_LOST` (never a silent re-send), and what was half read, the
        shutdown push and the refusal belong to the old connection."""
        for key, reply in list(self._replies.items()):
            if reply is None:
                self._replies[key] = dict(CONNECTION_LOST)
        self._order.clear()
        self._partial.clear()
        self.shutdown = None
        self.refusal = None
