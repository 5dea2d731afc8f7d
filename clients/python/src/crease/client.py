"""A client for creased: NDJSON over a Unix stream socket, standard library only.

The conversation itself (ids, line framing, matching replies and pushes) is
:class:`crease.protocol.Protocol`, which does no I/O; this module is the transport: the
socket, deadlines, reconnection, and several threads sharing one connection.
"""

from __future__ import annotations

import os
import select
import socket
import threading
import time
from typing import Any, Callable, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from .protocol import CreaseError, JSONObject, Key, Protocol, decode_json

__all__ = ["Client", "Subscription", "CreaseError", "ConnectionClosed", "DaemonRestarted", "JSONObject",
           "default_socket_path", "read_trace_header", "trace_monotonic_origin", "DEFAULT_TIMEOUT", "DEFAULT_WINDOW", "PathLike"]

PathLike = Union[str, "os.PathLike[str]"]

#: How long a reply may take before ``TimeoutError`` (seconds), unless the client says otherwise.
DEFAULT_TIMEOUT = 30.0
#: Messages ``send_many`` keeps in flight before it waits for replies.
DEFAULT_WINDOW = 1024

_READ_SIZE = 256 * 1024
_WRITE_CHUNK = 64 * 1024
# A `send_many` source that took longer than this to give its next message is paced: each
# of its messages is written as soon as it is produced.
_PACED_SOURCE_S = 0.0002


def default_socket_path(environ: Optional[Mapping[str, str]] = None) -> str:
    """The socket ``crease`` and ``creased`` use when none is given: ``$CREASE_SOCKET``,
    else ``$XDG_RUNTIME_DIR/crease/creased.sock``, else ``/run/crease/creased.sock``.
    Empty variables count as unset."""
    env = os.environ if environ is None else environ
    explicit = env.get("CREASE_SOCKET")
    if explicit:
        return explicit
    runtime = env.get("XDG_RUNTIME_DIR")
    if runtime:
        return f"{runtime}/crease/creased.sock"
    return "/run/crease/creased.sock"


def read_trace_header(path: PathLike) -> JSONObject:
    """The header of a trace file (its first line) as a dict: ``profile``, ``app``,
    ``initial`` (``seq``, ``state``, ``digest``), ``labels`` …, for :meth:`Client.load`."""
    with open(path, "rb") as f:
        header: JSONObject = decode_json(f.readline().decode())
    if header.get("crease") != "trace":
        raise ValueError(f"{os.fspath(path)} does not begin with a trace header")
    return header


def trace_monotonic_origin(path: PathLike) -> Optional[int]:
    """The CLOCK_MONOTONIC time (ns) of a trace's ``t`` = 0, from its header: what puts a
    frame's or a fault's capture time on the trace's axis. None when the header has none
    (a trace written before it existed, or by a tool)."""
    origin = read_trace_header(path).get("monotonicOrigin")
    return origin if isinstance(origin, int) and not isinstance(origin, bool) else None


class ConnectionClosed(ConnectionError):
    """The daemon closed the connection (it stopped, refused this peer, or dropped
    a reader that fell behind) before the awaited reply or push came."""


class DaemonRestarted(ConnectionClosed):
    """A client made with ``reconnect=True`` found creased gone and connected again: the
    message being sent was **not** sent (send it again if it still makes sense).
    ``hello`` is the new daemon's hello: ``seq`` where it resumed (``creased --resume``),
    ``resumed`` where from. Subscriptions were renewed."""

    def __init__(self, hello: JSONObject) -> None:
        self.hello = hello
        self.seq: Optional[int] = hello.get("seq") if isinstance(hello.get("seq"), int) else None
        super().__init__(f"creased restarted; it is at seq {self.seq}; the message was not sent")


class SendInterrupted(ConnectionClosed):
    """``send_many`` lost its connection (the daemon was killed or stopped) part way:
    ``replies`` are the replies received, for the first ``len(replies)`` messages in the
    order sent (those the daemon answered: under ``--fsync always``, on its disk); ``sent``
    counts the messages given to the socket. Messages from ``len(replies)`` on may or may not
    have been applied: a rig resends them after checking the daemon's ``seq``."""

    def __init__(self, replies: List[JSONObject], sent: int, why: str) -> None:
        self.replies = replies
        self.sent = sent
        super().__init__(f"{why}: {len(replies)} of {sent} messages sent were answered before the connection broke")


class _NotSent(ConnectionClosed):
    """The connection broke before any byte of the line was written: the daemon never saw it."""


class Client:
    """One connection to creased.

    ``path``: the socket (default: :func:`default_socket_path`). ``timeout``: seconds
    to wait for any one reply (None waits for ever). A client may be shared by
    threads: one can iterate a subscription while another sends.
    """

    def __init__(self, path: Optional[PathLike] = None, *, timeout: Optional[float] = DEFAULT_TIMEOUT,
                 reconnect: bool = False, on_restart: Optional[Callable[[JSONObject], None]] = None) -> None:
        self.path: str = os.fspath(path) if path is not None else default_socket_path()
        self.timeout = timeout
        #: With ``reconnect``, a request that finds the daemon gone connects again (backing off,
        #: up to ``timeout``), renews the subscriptions and calls ``on_restart(hello)`` (then sends
        #: the request) or, without it, raises :class:`DaemonRestarted` (the request not sent).
        #: Requests awaiting a reply when the connection broke raise either way.
        self.reconnect = reconnect
        self.on_restart = on_restart
        #: How many times this client connected again.
        self.restarts = 0
        sock = self._open()
        self._sock: Optional[socket.socket] = sock
        self._fd = sock.fileno()
        self._cond = threading.Condition()
        self._write_lock = threading.Lock()
        self._reading = False  # one thread at a time reads; the others wait on _cond
        self._protocol = Protocol()  # touched only under _cond
        self._closed_why: Optional[str] = None
        self._clock_offset: Optional[int] = None  # the daemon's clock minus ours, once estimated
        self._topics: List[str] = []  # subscribed, renewed after a reconnection
        self._closed_by_us = False

    # -- the connection

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _open(self) -> socket.socket:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(self.path)
        except FileNotFoundError:
            sock.close()
            raise FileNotFoundError(
                f"no creased socket at {self.path} (pass a path, or set CREASE_SOCKET)") from None
        except OSError:
            sock.close()
            raise
        sock.setblocking(False)
        return sock

    def _restore(self) -> None:
        """Connects again after the daemon went away (``reconnect``): see ``__init__``."""
        deadline = self._deadline(self.timeout)
        delay = 0.02
        while True:
            try:
                sock = self._open()
                break
            except OSError as e:
                if deadline is not None and time.monotonic() + delay > deadline:
                    raise ConnectionClosed(f"creased at {self.path} did not come back within {self.timeout} s ({e})") from None
                time.sleep(delay)
                delay = min(delay * 2, 0.5)
        with self._cond:
            # What the old connection owed is lost: its waiters get an error, never a silent re-send.
            self._protocol.restart()
            self._sock = sock
            self._fd = sock.fileno()
            self._closed_why = None
            self._cond.notify_all()
        hello = self.command("hello")
        if self._topics:
            self.command("subscribe", topics=list(self._topics))
        self.restarts += 1
        if self.on_restart is None:
            raise DaemonRestarted(hello)
        self.on_restart(hello)

    def close(self) -> None:
        """Closes the connection; replies still owed are not awaited."""
        with self._cond:
            self._closed_by_us = True
            sock, self._sock = self._sock, None
            if self._closed_why is None:
                self._closed_why = "the client closed the connection"
            self._cond.notify_all()
        if sock is not None:
            sock.close()

    @property
    def closed(self) -> bool:
        return self._sock is None

    # -- requests

    def send(self, message: Mapping[str, Any]) -> JSONObject:
        """Sends one event (``{"event": ...}``) or command (``{"cmd": ...}``) and returns
        its reply. Raises :class:`CreaseError` when the daemon rejects it."""
        key, line = self._prepare(message)
        try:
            with self._write_lock:
                self._write(line)
        except _NotSent:
            with self._cond:
                self._protocol.forget(key)
            if not self.reconnect or self._closed_by_us:
                raise
            # Found gone while writing, nothing of this line written: connect again, then
            # (with on_restart) send it to the new daemon; never one it may have seen.
            self._restore()
            return self.send(message)
        except BaseException:
            with self._cond:
                self._protocol.forget(key)
            raise
        reply = self._await(key, self.timeout)
        if reply.get("ok") is False:
            raise CreaseError(reply)
        return reply

    def send_many(self, messages: Iterable[Mapping[str, Any]], *, check: bool = True,
                  window: int = DEFAULT_WINDOW) -> List[JSONObject]:
        """Sends messages pipelined (up to ``window`` awaiting replies at once) and
        returns their replies in the order sent. With ``check`` (the default) a rejected
        message raises :class:`CreaseError` (``index`` says which; ``reply`` is its
        reply) once all replies are in; without it, rejections are returned as replies."""
        if window < 1:
            raise ValueError("window must be at least 1")
        source = iter(messages)
        keys: List[Key] = []
        replies: List[JSONObject] = []
        pending = bytearray()  # encoded lines not yet written
        exhausted = False
        try:
            with self._write_lock:
                deadline = self._deadline(self.timeout)
                while True:
                    with self._cond:
                        answered = len(replies)
                        while len(replies) < len(keys):
                            reply = self._protocol.take_reply(keys[len(replies)])
                            if reply is None:
                                break
                            replies.append(reply)
                    if len(replies) > answered:
                        deadline = self._deadline(self.timeout)
                    in_flight = len(keys) - len(replies)
                    while not exhausted and in_flight < window and len(pending) < _WRITE_CHUNK:
                        asked = time.monotonic()
                        try:
                            message = next(source)
                        except StopIteration:
                            exhausted = True
                            break
                        key, line = self._prepare(message)
                        keys.append(key)
                        pending += line
                        in_flight += 1
                        # A source that made us wait is paced (a rig's 1 kHz stream): what it
                        # produced goes out now, not once a chunk has gathered, so events
                        # reach the daemon when the caller believes they do.
                        if time.monotonic() - asked > _PACED_SOURCE_S:
                            break
                    if exhausted and not pending and len(replies) == len(keys):
                        break
                    if self._pump(pending, deadline):
                        deadline = self._deadline(self.timeout)
        except (ConnectionClosed, BrokenPipeError, ConnectionResetError) as e:
            with self._cond:
                for key in keys[len(replies):]:
                    self._protocol.forget(key)
            # What was acknowledged before the break is not lost: the caller learns which
            # messages the daemon answered (the first len(replies)) and resends from there.
            raise SendInterrupted(replies, len(keys), str(e)) from e
        except BaseException:
            with self._cond:
                for key in keys[len(replies):]:
                    self._protocol.forget(key)
            raise
        if check:
            for i, reply in enumerate(replies):
                if reply.get("ok") is False:
                    raise CreaseError(reply, index=i)
        return replies

    def command(self, name: str, **fields: Any) -> JSONObject:
        """Sends ``{"cmd": name, **fields}`` and returns the reply."""
        return self.send({"cmd": name, **fields})

    def hello(self) -> JSONObject:
        """The daemon's version, profile, app, seq, digest, this connection's access and
        the daemon's ``labels`` (its ``--label KEY=VALUE`` options, a dict)."""
        return self.command("hello")

    def layout(self) -> JSONObject:
        """The current layout (the layout object itself; its ``seq`` and ``digest`` inside)."""
        layout: JSONObject = self.command("layout")["layout"]
        return layout

    def state(self) -> JSONObject:
        """The current state as the daemon writes it: ``{"seq", "state": {"hingeAngle",
        "pose", …, "ui": {…}}}``."""
        state: JSONObject = self.command("state")["state"]
        return state

    def stats(self, reset: bool = False) -> JSONObject:
        """The daemon's counters, latency histogram, observations, glitches, trace and
        labels. With ``reset`` (a publisher's right) the figures up to now, after which
        the daemon's counters start again at zero."""
        reply = self.command("stats", reset=True) if reset else self.command("stats")
        stats: JSONObject = reply["stats"]
        return stats

    def load(self, state: Optional[Mapping[str, Any]] = None, *, profile: Optional[Mapping[str, Any]] = None,
             app: Optional[Mapping[str, Any]] = None, digest: Optional[str] = None,
             header: Optional[Mapping[str, Any]] = None) -> JSONObject:
        """Puts the daemon into a profile, app and state at once (``{"cmd": "load"}``, a
        publisher's right) and returns the reply (``seq``, ``changed``, ``digest``).

        ``state`` is a device state as ``state()`` returns it (``{"seq", "state"}``) or
        its inner ``state``; ``profile`` and ``app`` a device profile and a manifest;
        ``digest`` refuses the load (``digestMismatch``) unless the state gives that
        layout digest. ``header``, a trace file's header (:func:`read_trace_header`),
        gives all four from where the trace begins; the other arguments override it.
        What is left out stays as it is (the state: the app's default state)."""
        message: JSONObject = {"cmd": "load"}
        if header is not None:
            initial = header.get("initial") or {}
            for key, value in (("profile", header.get("profile")), ("app", header.get("app")),
                               ("state", initial.get("state")), ("digest", initial.get("digest"))):
                if value is not None:
                    message[key] = value
        for key, value in (("profile", profile), ("app", app), ("state", state), ("digest", digest)):
            if value is not None:
                message[key] = value
        return self.send(message)

    def frame(self, verdict: Mapping[str, Any]) -> JSONObject:
        """Records a frame judge's verdict on the device's screen in the trace
        (``{"cmd": "frame", "kind", "t", "refSeq", "frame"[, "region", "relayoutMs"]}``, a
        publisher's right; docs/frames.md)."""
        return self.command("frame", **dict(verdict))

    def mark(self, label: str) -> JSONObject:
        """Writes an annotation into the trace at the current seq; the reply says
        ``traced``: whether a trace recorded it."""
        return self.command("mark", label=label)

    def sync(self) -> JSONObject:
        """Returns once every earlier event (from every client) is applied and
        published: ``seq`` and ``digest`` of the layout then."""
        return self.command("sync")

    def hinge(self, angle: float, *, unit: str = "deg", ts: Optional[int] = None) -> JSONObject:
        """Sends a hinge reading as the rig has it: ``unit`` ``"deg"`` (WebDriverAgent's
        hinge endpoint, Appium's ``mobile: getSimulatedHingeAngle``) or ``"rad"``
        (``UIHinge.angle``, ``XCUIHinge.angle``, CoreMotion). An encoder's overshoot past 0
        or 180 degrees within the profile's ``hingeTolerance`` is clamped by the daemon."""
        message: JSONObject = {"event": "hinge", "angle": angle}
        if unit != "deg":
            message["unit"] = unit
        if ts is not None:
            message["ts"] = ts
        return self.send(message)

    def motion(self, gravity: Sequence[float], *, ts: Optional[int] = None) -> JSONObject:
        """Sends one IMU sample: ``gravity`` ``(x, y, z)`` in g in CoreMotion's frame (x
        right, y up, z out of the screen, portrait). The daemon's orientation filter turns
        the samples into the device orientation, and that into the interface orientation."""
        x, y, z = (float(v) for v in gravity)
        message: JSONObject = {"event": "motion", "gravity": [x, y, z]}
        if ts is not None:
            message["ts"] = ts
        return self.send(message)

    def rotation_lock(self, enabled: bool) -> JSONObject:
        """Turns the portrait orientation lock on or off."""
        return self.send({"event": "rotationLock", "enabled": enabled})

    def clock(self) -> int:
        """The daemon's clock now (CLOCK_MONOTONIC nanoseconds: the clock of ``capturedAt``
        and of the trace's ``monotonicOrigin``)."""
        now: int = self.command("clock")["now"]
        return now

    def clock_offset(self, samples: int = 5) -> int:
        """The daemon's clock minus this process's ``time.monotonic_ns()``, in nanoseconds,
        estimated as NTP does: of ``samples`` round trips, the one that took least, taking
        the daemon's reading as made half way. On the daemon's machine it is about 0 (both
        read CLOCK_MONOTONIC); on another machine it carries that machine's offset, good to
        half the shortest round trip. The estimate is kept for ``observe(captured_at=…)``."""
        if samples < 1:
            raise ValueError("samples must be at least 1")
        best: Optional[Tuple[int, int]] = None
        for _ in range(samples):
            sent = time.monotonic_ns()
            now = self.clock()
            received = time.monotonic_ns()
            trip = received - sent
            if best is None or trip < best[0]:
                best = (trip, now - (sent + received) // 2)
        assert best is not None
        self._clock_offset = best[1]
        return best[1]

    def observe(self, observed: Mapping[str, Any], tolerance: Optional[float] = None,
                ts: Optional[int] = None, captured_at: Union[None, int, Tuple[int, int], Sequence[int]] = None,
                clock: str = "local") -> JSONObject:
        """Reports what the device shows (``{"cmd": "observe"}``, a publisher's right):
        ``observed`` in the layout's vocabulary (``barAxis``, ``items`` …), ``tolerance``
        points per frame edge (the daemon's default 2), ``ts`` the rig's clock in
        nanoseconds. Returns the reply: ``verdict`` (``match``, ``stale`` or
        ``mismatch``), ``seq``, ``layoutSeq``, ``matchedSeq``, ``differences``.

        ``captured_at``: when the screen was read, one time or ``(start, end)`` for a
        capture that took a while; the daemon then judges the observation against the
        layouts current during the capture, not when it arrived. With ``clock="local"``
        (the default) the times are this process's ``time.monotonic_ns()``, converted with
        :meth:`clock_offset` (estimated on first use); with ``clock="daemon"`` they are the
        daemon's already."""
        message: JSONObject = {"cmd": "observe", "observed": dict(observed)}
        if tolerance is not None:
            message["tolerance"] = tolerance
        if ts is not None:
            message["ts"] = ts
        if captured_at is not None:
            if clock not in ("local", "daemon"):
                raise ValueError('clock must be "local" or "daemon"')
            times = [int(captured_at)] if isinstance(captured_at, int) else [int(t) for t in captured_at]
            if len(times) not in (1, 2):
                raise ValueError("captured_at is one time or (start, end)")
            if clock == "local":
                offset = self._clock_offset if self._clock_offset is not None else self.clock_offset()
                times = [t + offset for t in times]
            message["capturedAt"] = times[0] if len(times) == 1 else times
        return self.send(message)

    def subscribe(self, *topics: str) -> "Subscription":
        """Subscribes this connection to ``topics`` (``layout``, ``diagnostics``,
        ``stats``, ``glitches``, ``conformance``) and returns an iterator of their pushes.
        A ``layout`` subscription starts with the current layout. Several subscriptions
        on one client each yield only their own topics."""
        if not topics:
            raise ValueError("subscribe needs at least one topic")
        reply = self.command("subscribe", topics=list(topics))
        self._topics += [t for t in topics if t not in self._topics]
        return Subscription(self, tuple(topics), reply)

    def unsubscribe(self, *topics: str) -> JSONObject:
        """Removes ``topics`` (all of them when none is given); pushes already received stay queued."""
        if topics:
            reply = self.command("unsubscribe", topics=list(topics))
            self._topics = [t for t in self._topics if t not in topics]
            return reply
        reply = self.command("unsubscribe")
        self._topics = []
        return reply

    # -- pushes (used by Subscription)

    def _take_push(self, topics: Tuple[str, ...], timeout: Optional[float], seen_shutdown: bool) -> JSONObject:
        """The next push of ``topics``, or the ``shutdown`` push once per subscription."""
        found: List[JSONObject] = []

        def ready() -> bool:
            push = self._protocol.take_push(topics)
            if push is None and not seen_shutdown:
                push = self._protocol.shutdown
            if push is not None:
                found.append(push)
            return push is not None

        self._wait(ready, timeout, what=f"{'/'.join(topics)} push")
        return found[0]

    def _drain_pushes(self, topics: Tuple[str, ...]) -> List[JSONObject]:
        """Pushes of ``topics`` received so far, after reading what the socket holds now."""
        if self._try_become_reader():
            try:
                self._read_available()
            finally:
                self._stop_reading()
        with self._cond:
            return self._protocol.take_pushes(topics)

    def _shutdown_push(self) -> Optional[JSONObject]:
        with self._cond:
            return self._protocol.shutdown

    # -- plumbing

    def _pump(self, pending: bytearray, deadline: Optional[float]) -> bool:
        """One step of ``send_many``: writes some of ``pending`` and reads what came, or,
        while another thread reads, writes and waits for it to file the replies.
        Returns whether anything moved."""
        with self._cond:
            reader = not self._reading
            if reader:
                self._reading = True
            if not reader and not pending:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    raise self._timed_out("reply")
                return self._cond.wait(remaining)
        try:
            readable, writable = self._poll(want_write=bool(pending), want_read=reader, deadline=deadline)
            sent = self._send_some(pending) if writable else 0
            del pending[:sent]
            return bool(sent) or (readable and self._read_available())
        finally:
            if reader:
                self._stop_reading()

    def _prepare(self, message: Mapping[str, Any]) -> Tuple[Key, bytes]:
        """Registers the message as awaiting a reply and encodes its line (see ``Protocol.request``)."""
        if self._sock is None and self.reconnect and not self._closed_by_us:
            self._restore()
        with self._cond:
            if self._sock is None:
                raise ConnectionClosed(self._closed_why or "closed")
            return self._protocol.request(message)

    def _timed_out(self, what: str, timeout: Optional[float] = None) -> TimeoutError:
        """The one wording of a deadline passed."""
        return TimeoutError(f"no {what} from creased at {self.path} within {self.timeout if timeout is None else timeout} s")

    @staticmethod
    def _deadline(timeout: Optional[float]) -> Optional[float]:
        return None if timeout is None else time.monotonic() + timeout

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        deadline = self._deadline(self.timeout)
        while view:
            try:
                sent = self._send_some(view)
            except ConnectionClosed as e:
                if len(view) == len(data):
                    raise _NotSent(str(e)) from e
                raise
            view = view[sent:]
            if view:
                self._poll(want_write=True, want_read=False, deadline=deadline)

    def _send_some(self, data: Union[bytes, bytearray, memoryview]) -> int:
        sock = self._sock
        if sock is None:
            raise ConnectionClosed(self._closed_why or "closed")
        try:
            return sock.send(data[:_WRITE_CHUNK])
        except BlockingIOError:
            return 0
        except OSError as e:
            self._ended(f"the connection broke while writing: {e}")
            raise ConnectionClosed(self._closed_why or str(e)) from e

    def _poll(self, want_write: bool, deadline: Optional[float], want_read: bool = True) -> Tuple[bool, bool]:
        """Waits until the socket can be read or written; TimeoutError past the deadline."""
        if self._sock is None:
            raise ConnectionClosed(self._closed_why or "closed")
        remaining = None if deadline is None else deadline - time.monotonic()
        if remaining is not None and remaining <= 0:
            raise self._timed_out("reply")
        poller = select.poll()
        poller.register(self._fd, (select.POLLIN if want_read else 0) | (select.POLLOUT if want_write else 0))
        events = poller.poll(None if remaining is None else max(1, int(remaining * 1000)))
        if not events:
            raise self._timed_out("reply")
        mask = events[0][1]
        # An error or hang-up shows as readable: the read that follows finds out.
        return bool(mask & (select.POLLIN | select.POLLERR | select.POLLHUP)), bool(mask & select.POLLOUT)

    def _read_available(self) -> bool:
        """Reads and dispatches whatever the socket holds now (the caller is the reader);
        returns whether anything came."""
        sock = self._sock
        if sock is None:
            return False
        got = False
        while True:
            try:
                data = sock.recv(_READ_SIZE)
            except BlockingIOError:
                return got
            except OSError as e:
                self._ended(f"the connection broke: {e}")
                return True
            if not data:
                self._ended("creased closed the connection")
                return True
            got = True
            self._feed(data)
            if len(data) < _READ_SIZE:
                return got

    def _feed(self, data: bytes) -> None:
        with self._cond:
            if self._protocol.feed(data):
                if self._protocol.refusal is not None:
                    self._closed_why = self._protocol.refusal
                self._cond.notify_all()

    def _ended(self, why: str) -> None:
        with self._cond:
            if self._closed_why is None or self._closed_why.startswith("the client"):
                self._closed_why = why
            else:
                self._closed_why = f"{why}: {self._closed_why}"
            sock, self._sock = self._sock, None
            self._cond.notify_all()
        if sock is not None:
            sock.close()

    def _await(self, key: Tuple[str, Any], timeout: Optional[float]) -> JSONObject:
        found: List[JSONObject] = []

        def ready() -> bool:
            reply = self._protocol.take_reply(key)
            if reply is not None:
                found.append(reply)
            return reply is not None

        try:
            self._wait(ready, timeout, what="reply")
        except (TimeoutError, ConnectionClosed):
            with self._cond:
                self._protocol.forget(key)
            raise
        return found[0]

    def _wait(self, ready: Callable[[], bool], timeout: Optional[float], what: str) -> None:
        """Reads (or lets another thread read) until ``ready()``, called under the lock, is true."""
        deadline = self._deadline(timeout)
        with self._cond:
            while not ready():
                if self._sock is None:
                    raise ConnectionClosed(f"no {what} will come: {self._closed_why}")
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    raise self._timed_out(what, timeout)
                if self._reading:
                    self._cond.wait(remaining)
                    continue
                self._reading = True
                self._cond.release()
                try:
                    if not self._read_available():
                        r, _ = self._poll(want_write=False, deadline=deadline)
                        if r:
                            self._read_available()
                except TimeoutError:
                    pass  # the loop reports it with what was awaited
                finally:
                    self._cond.acquire()
                    self._reading = False
                    self._cond.notify_all()

    def _try_become_reader(self) -> bool:
        with self._cond:
            if self._reading:
                return False
            self._reading = True
            return True

    def _stop_reading(self) -> None:
        with self._cond:
            self._reading = False
            self._cond.notify_all()


class Subscription(Iterator[JSONObject]):
    """The pushes of some topics on one client, in the order they arrived.

    Iterating blocks until the next push; it ends after the ``shutdown`` push (which
    it yields) or when the connection closes. :meth:`get` waits with a timeout;
    :meth:`drain` returns what has arrived without waiting."""

    def __init__(self, client: Client, topics: Tuple[str, ...], reply: JSONObject) -> None:
        self.client = client
        self.topics = topics
        #: The reply to ``subscribe``: ``seq`` and every topic the connection now has.
        self.reply = reply
        self._saw_shutdown = False
        self._ended = False
        # The client's restarts when this subscription last saw a shutdown: a client that
        # reconnected since renewed the subscription, which goes on with the new daemon.
        self._restarts = client.restarts

    def __iter__(self) -> "Subscription":
        return self

    def __next__(self) -> JSONObject:
        if self._ended:
            raise StopIteration
        try:
            return self.get(timeout=None)
        except ConnectionClosed:
            self._ended = True
            raise StopIteration from None

    def _renewed(self) -> None:
        """After a reconnection (``reconnect=True``) the subscription is the new daemon's:
        a shutdown the old one pushed no longer ends it."""
        if self.client.restarts != self._restarts:
            self._restarts = self.client.restarts
            self._saw_shutdown = False
            self._ended = False

    def get(self, timeout: Optional[float] = None) -> JSONObject:
        """The next push; TimeoutError if none comes within ``timeout`` seconds."""
        self._renewed()
        if self._saw_shutdown:
            self._ended = True
            raise ConnectionClosed("creased pushed shutdown")
        push = self.client._take_push(self.topics, timeout, self._saw_shutdown)
        if push.get("push") == "shutdown":
            self._saw_shutdown = True
        return push

    def drain(self) -> List[JSONObject]:
        """The pushes that have arrived, without waiting for more; the ``shutdown`` push
        last, once, when the daemon sent it."""
        self._renewed()
        pushes = self.client._drain_pushes(self.topics)
        shutdown = self.client._shutdown_push()
        if shutdown is not None and not self._saw_shutdown:
            self._saw_shutdown = True
            pushes.append(shutdown)
        return pushes

    def close(self) -> None:
        """Unsubscribes from this subscription's topics."""
        if not self.client.closed:
            self.client.unsubscribe(*self.topics)

    def __enter__(self) -> "Subscription":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
