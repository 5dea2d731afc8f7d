"""A captured trace done again on the phone, and how often its glitch comes back
(docs/reproduce.md).

:func:`replay` drives the device through a trace's events with their recorded timing as
far as the rig file's costs allow: it says first which stretches cannot keep their timing
and by how much, folds a run of hinge readings into the moves a motor makes (its turning
points and its end), looks where the trace looked (or after every layout change), and
marks the rig's trace with where the replay began and ended. :func:`reproduce` runs it N
times, resetting the phone between runs, and counts the runs in which the target came back:
a glitch kind (and subject) the rig's creased reports, or a non-matching look where the
trace had one at a seq.

Standard library only.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, List, Optional, Tuple

from .client import JSONObject
from .rigfile import RigFile
from .tracefile import trace_records

if TYPE_CHECKING:
    from .rig import Rig

__all__ = ["RecordedStep", "RecordedTrace", "TimingWarning", "ReplayResult", "Target", "Reproduction",
           "ReplayError", "read_trace", "timing_plan", "replay", "reproduce", "binomial_interval", "OBSERVE_MODES"]

#: How a replay looks at the device: where the trace looked, after every layout change, or never.
OBSERVE_MODES = ("as-recorded", "every-change", "none")
#: A trace bigger than this is not read whole into a replay (a night of 1 kHz ticks is ~100 MB).
TRACE_LIMIT = 1 << 30


class ReplayError(ValueError):
    """The trace cannot be replayed on this rig (a gap, a load, a move the rig cannot make)."""


@dataclass(frozen=True)
class RecordedStep:
    """An event or a look of the trace: its seq and time (the daemon's ns) as recorded, the
    event object (without ``ts``) or the observed object, and the recorded verdict."""

    seq: int
    t: int
    event: Optional[JSONObject] = None
    observed: Optional[JSONObject] = None
    verdict: Optional[str] = None


@dataclass(frozen=True)
class RecordedTrace:
    path: str
    header: JSONObject
    steps: Tuple[RecordedStep, ...]


def _initial_state(header: JSONObject) -> Optional[JSONObject]:
    initial = header.get("initial")
    state = initial.get("state") if isinstance(initial, dict) else None
    return state if isinstance(state, dict) else None


def _starts_default(header: JSONObject) -> bool:
    """Whether the trace began in its app's default state: a trace the daemon began fresh
    (``reason`` start, part 0), as a rig's reset leaves the phone."""
    return header.get("reason") == "start" and header.get("part") == 0


def read_trace(path: "os.PathLike[str] | str") -> RecordedTrace:
    """The events and looks of a trace file (a regular file of at most 1 GiB), from its last
    reset: a load of the state the trace started in (what a rig's reset does) starts the
    steps afresh, as the replay starts from a reset phone. A gap, or a load of another
    state, is refused: the phone cannot be put in the state the daemon jumped to."""
    name = os.fspath(path)
    steps: List[RecordedStep] = []
    header: Optional[JSONObject] = None
    app: object = None
    for number, record in trace_records(name, TRACE_LIMIT, ReplayError, "a replay"):
        if header is None:
            header = record
            app = header.get("app")
            continue
        if "gap" in record or "lost" in record:
            raise ReplayError(f"{name}:{number}: records were lost here (a gap); replay the part after it (crease trace slice)")
        if "load" in record:
            # A load record leaves out the profile and app it kept and the app's default
            # state (a rig's reset is `"load":{}`): what it leaves out is what was in place.
            load = record["load"] if isinstance(record["load"], dict) else {}
            if "app" in load:
                app = load["app"]
            default_state = "state" not in load
            if app == header.get("app") and (load.get("state") == _initial_state(header) or (default_state and _starts_default(header))):
                steps.clear()
                continue
            raise ReplayError(f"{name}:{number}: a state other than the start was loaded at seq {record.get('seq')}; "
                              "replay the part after it (crease trace slice)")
        if "event" in record:
            event = {k: v for k, v in dict(record["event"]).items() if k not in ("ts", "id")}
            steps.append(RecordedStep(seq=int(record["seq"]), t=int(record["t"]), event=event))
        elif "observe" in record:
            # A look kept as a view of a layout (`observedAs`) has no observed object in the
            # record; the reference stands in for it (crease replay rebuilds it).
            observed = record["observe"].get("observed")
            if observed is None and isinstance(record.get("observedAs"), dict):
                observed = {"observedAs": record["observedAs"]}
            steps.append(RecordedStep(seq=int(record["seq"]), t=int(record["t"]), observed=dict(observed or {}),
                                      verdict=record.get("verdict")))
    if header is None:
        raise ReplayError(f"{name}: empty, no trace header")
    return RecordedTrace(path=name, header=header, steps=tuple(steps))


@dataclass(frozen=True)
class TimingWarning:
    """A stretch of the trace the rig cannot do in its recorded time: seqs ``first``…``last``,
    the seconds the trace took (at the replay's speed) and the seconds the rig needs."""

    first: int
    last: int
    what: str
    wanted: float
    needed: float

    @property
    def late(self) -> float:
        return self.needed - self.wanted

    def __str__(self) -> str:
        return (f"seq {self.first}…{self.last}: {self.what} took {self.wanted:.3f} s in the trace; "
                f"the rig needs {self.needed:.3f} s ({self.late:.3f} s late)")


def _hinge_angle(step: RecordedStep) -> Optional[float]:
    """The angle of a hinge event, else None."""
    if step.event is None or step.event.get("event") != "hinge":
        return None
    return float(step.event["angle"])


def _moves(trace: RecordedTrace) -> List[Tuple[int, int]]:
    """The steps a replay does, as (first, last) indexes: a look alone; a run of hinge
    readings cut at each turning point (a motor moves to each and on to the end); any
    other event alone."""
    moves: List[Tuple[int, int]] = []
    steps = trace.steps
    i = 0
    while i < len(steps):
        angle = _hinge_angle(steps[i])
        if angle is None:
            moves.append((i, i))
            i += 1
            continue
        j, direction = i, 0
        while j + 1 < len(steps):
            following, current = _hinge_angle(steps[j + 1]), _hinge_angle(steps[j])
            if following is None or current is None:
                break
            turn = 0 if following == current else (1 if following > current else -1)
            if direction and turn and turn != direction:
                break
            direction = direction or turn
            j += 1
        moves.append((i, j))
        i = j + 1
    return moves


def _due_ns(trace: RecordedTrace, move: Tuple[int, int]) -> int:
    """When a move is done in the trace: a fold when it reaches its last reading (a motor
    moves through the readings before it), anything else at its own time."""
    return trace.steps[move[1]].t


def timing_plan(trace: RecordedTrace, rig_file: RigFile, speed: float = 1.0) -> List[TimingWarning]:
    """Which stretches cannot keep their recorded timing on this rig at ``speed`` (2 is twice
    as fast), and by how much: each move's cost against the time the trace gives it (from
    when the move before it was done to when it is)."""
    if speed <= 0:
        raise ValueError("speed must be more than 0")
    warnings: List[TimingWarning] = []
    start = _initial_state(trace.header) or {}
    angle = float(start.get("hingeAngle", 0.0))
    looks = rig_file.looks.get("page-source") or 0.0
    previous = trace.steps[0].t if trace.steps else 0
    for a, b in _moves(trace):
        first, last = trace.steps[a], trace.steps[b]
        due = _due_ns(trace, (a, b))
        wanted = (due - previous) / 1e9 / speed
        previous = due
        if last.event is None:
            needed, what = looks, "a look"
        else:
            cost = rig_file.cost(last.event, angle)
            if cost is None:
                continue  # refused by replay before it starts
            to = _hinge_angle(last)
            if to is not None:
                moved = abs(to - angle)
                what = f"a fold of {moved:.1f}° ({moved / wanted:.0f}°/s)" if wanted > 0 else f"a fold of {moved:.1f}°"
                angle = to
            else:
                what = f"a {last.event.get('event')} event"
            needed = cost
        if needed > wanted + 1e-9:
            warnings.append(TimingWarning(first=first.seq, last=last.seq, what=what, wanted=wanted, needed=needed))
    return warnings


@dataclass
class ReplayResult:
    """What a replay did: the warnings it gave before it began, the moves made (with the
    time each was due and when it was done, seconds from the start), the looks (the original
    seq, the reply), the glitches the rig's creased reported meanwhile, and where the replay
    lies in the rig's trace (its file and seq range, marked ``replay of …``)."""

    warnings: List[TimingWarning] = field(default_factory=list)
    achieved: List[JSONObject] = field(default_factory=list)
    looks: List[JSONObject] = field(default_factory=list)
    glitches: List[JSONObject] = field(default_factory=list)
    trace: Optional[str] = None
    seqs: Tuple[int, int] = (0, 0)
    readings_folded: int = 0


def replay(rig: "Rig", trace: "RecordedTrace | os.PathLike[str] | str", *, speed: float = 1.0, observe: str = "as-recorded",
           run: int = 1) -> ReplayResult:
    """Drives the device through ``trace`` at ``speed`` (1: as recorded), looking as
    ``observe`` says (:data:`OBSERVE_MODES`). A move that comes due while the last is not done
    waits for it: the achieved times say by how much each was late."""
    if observe not in OBSERVE_MODES:
        raise ValueError(f"observe must be one of {', '.join(OBSERVE_MODES)}")
    recorded = trace if isinstance(trace, RecordedTrace) else read_trace(trace)
    cannot = sorted({str(s.event.get("event")) for s in recorded.steps
                     if s.event is not None and not rig.rig.can("hinge" if s.event.get("event") == "hinge" else str(s.event.get("event")))})
    if cannot:
        raise ReplayError(f"{recorded.path}: the rig file says this rig cannot make {', '.join(cannot)} moves; the replay would not be the trace's")
    result = ReplayResult(warnings=timing_plan(recorded, rig.rig, speed))
    label = f"replay of {os.path.basename(recorded.path)}, run {run}"
    begin = rig.client.mark(f"{label}: begin")
    subscription = rig.client.subscribe("glitches")
    moves = _moves(recorded)
    origin = recorded.steps[0].t if recorded.steps else 0
    started = time.monotonic()
    try:
        for a, b in moves:
            result.readings_folded += b - a
            step = recorded.steps[b]
            due = (_due_ns(recorded, (a, b)) - origin) / 1e9 / speed
            wait = due - (time.monotonic() - started)
            if wait > 0:
                time.sleep(wait)
            if step.event is not None:
                reply = rig.perform(step.event)
                result.achieved.append({"seq": step.seq, "due": round(due, 6), "done": round(time.monotonic() - started, 6)})
                if observe == "every-change" and reply.get("changed"):
                    result.looks.append({"originalSeq": step.seq, "reply": rig.settle()})
            elif observe == "as-recorded":
                at = rig.client.clock()   # the daemon's clock when the device was looked at
                look = rig.look()
                result.looks.append({"originalSeq": step.seq, "recorded": step.verdict, "reply": look, "t": at})
        end = rig.client.mark(f"{label}: end")
    finally:
        result.glitches = [p["glitch"] for p in subscription.drain() if p.get("push") == "glitches" and "glitch" in p]
        rig.client.unsubscribe("glitches")
    result.seqs = (int(begin.get("seq", 0)), int(end.get("seq", 0)))
    trace_figures = rig.client.stats().get("trace", {})
    result.trace = trace_figures.get("file") if isinstance(trace_figures, dict) else None
    return result


@dataclass(frozen=True)
class Target:
    """What a reproduction looks for: a glitch ``kind`` (and ``subject``), or a look that does
    not match where the trace's look at ``seq`` did not."""

    kind: Optional[str] = None
    subject: Optional[str] = None
    seq: Optional[int] = None

    @staticmethod
    def parse(*, seq: Optional[int] = None, glitch: Optional[str] = None) -> "Target":
        if (seq is None) == (glitch is None):
            raise ValueError("a target is a seq (--seq N) or a glitch (--glitch KIND[:SUBJECT]), one of them")
        if glitch is not None:
            kind, _, subject = glitch.partition(":")
            if not kind:
                raise ValueError("--glitch KIND[:SUBJECT]")
            return Target(kind=kind, subject=subject or None)
        return Target(seq=seq)

    def describe(self) -> str:
        if self.seq is not None:
            return f"the look at seq {self.seq} not matching"
        return f"a {self.kind} glitch" + (f" of {self.subject!r}" if self.subject else "")

    def found(self, result: ReplayResult) -> Optional[JSONObject]:
        """Where the target came back in a replay (the rig's seq and time), or None."""
        if self.seq is not None:
            for look in result.looks:
                if look.get("originalSeq") == self.seq and look["reply"].get("verdict") not in (None, "match"):
                    return {"seq": look["reply"].get("seq"), "t": look.get("t"), "verdict": look["reply"].get("verdict")}
            return None
        for g in result.glitches:
            if g.get("kind") == self.kind and (self.subject is None or g.get("subject") == self.subject):
                seqs, ts = g.get("seq") or [None], g.get("t") or [None]
                return {"seq": seqs[0], "t": ts[0]}
        return None


@dataclass
class Reproduction:
    """``reproduced`` of ``runs`` replays showed the target; ``at`` where, each time; the
    replays' places in the rig's traces."""

    runs: int
    reproduced: int
    at: List[JSONObject]
    traces: List[JSONObject]
    warnings: List[TimingWarning]

    def json(self) -> JSONObject:
        return {"runs": self.runs, "reproduced": self.reproduced, "at": self.at, "traces": self.traces,
                "warnings": [str(w) for w in self.warnings]}


def reproduce(rig: "Rig", trace: "RecordedTrace | os.PathLike[str] | str", *, runs: int, target: Target, speed: float = 1.0,
              observe: str = "as-recorded") -> Reproduction:
    """Replays ``trace`` ``runs`` times, resetting the phone before each, and counts the runs
    in which ``target`` came back."""
    if runs < 1:
        raise ValueError("runs must be at least 1")
    recorded = trace if isinstance(trace, RecordedTrace) else read_trace(trace)
    if target.seq is not None and not any(s.seq == target.seq and s.observed is not None for s in recorded.steps):
        raise ReplayError(f"{recorded.path} has no look at seq {target.seq}: nothing to reproduce there")
    at: List[JSONObject] = []
    traces: List[JSONObject] = []
    warnings: List[TimingWarning] = []
    for run in range(1, runs + 1):
        rig.reset()
        result = replay(rig, recorded, speed=speed, observe=observe, run=run)
        warnings = result.warnings
        traces.append({"run": run, "file": result.trace, "seq": list(result.seqs)})
        place = target.found(result)
        if place is not None:
            at.append({"run": run, **place})
    return Reproduction(runs=runs, reproduced=len(at), at=at, traces=traces, warnings=warnings)


def binomial_interval(successes: int, trials: int, z: float = 2.576) -> Tuple[float, float]:
    """Wilson's score interval of a rate (z 2.576: 99 %), for saying how sure a rate is."""
    if trials <= 0:
        raise ValueError("trials must be at least 1")
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * ((p * (1 - p) / trials + z * z / (4 * trials * trials)) ** 0.5) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)
