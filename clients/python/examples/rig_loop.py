#!/usr/bin/env python3
"""A rig's loop: stream hinge ticks from a (simulated) encoder into creased, follow the
layouts it publishes, report what the device shows, and mark glitches in the trace.

    python3 rig_loop.py --socket /tmp/duo.sock --seconds 2 --rate 1000

The encoder unfolds the hinge from shut to flat and back, with noise, and once drops
out (reads 0 for one tick, as a loose connector does). The rig notices the dropout,
marks it in the trace, and does not send the bad reading. After each new layout it
looks at the "device" and observes what it shows. The device here is a stand-in that
answers from Crease's own layouts: its first look after a change still shows the
layout before (a device animating), and once it shows a control 24 points too low. A
stale verdict means "look again"; a mismatch is marked in the trace. The non-matches
also come in on the ``conformance`` topic, as a dashboard watching the rig sees them.
Exit 0 when every event was accepted, 1 otherwise.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from typing import Any, Dict, Iterator, List, Optional

import crease


def encoder(rate_hz: float, seconds: float, seed: int) -> Iterator[float]:
    """Hinge angles at ``rate_hz`` for ``seconds``: one unfold-and-fold, noise of a few
    tenths of a degree, quantized to the encoder's 0.1 degree, one dropout in the middle."""
    rng = random.Random(seed)
    ticks = max(2, int(rate_hz * seconds))
    dropout = ticks // 3
    for i in range(ticks):
        if i == dropout:
            yield 0.0
            continue
        ideal = 90 - 90 * math.cos(2 * math.pi * i / ticks)  # 0 → 180 → 0
        noisy = ideal + rng.gauss(0, 0.3)
        yield round(min(180.0, max(0.0, noisy)), 1)


def seen_on_screen(layout: Dict[str, Any]) -> Dict[str, Any]:
    """What a rig reading the screen would report of ``layout``: the bars' axis and side
    and every visible item with its frame."""
    items = [{"id": item["id"], "frame": dict(item["frame"])} for bar in layout["bars"] for item in bar["items"]]
    return {"barAxis": layout["barAxis"], "verticalBarSide": layout["verticalBarSide"], "items": items}


class StandInDevice:
    """Shows what Crease computed: on the first look after a change still the layout
    before it, except after the ``misplace_at``-th change, where it shows the new one
    with its first control 24 points low, once."""

    def __init__(self, layout: Dict[str, Any], misplace_at: int = 3) -> None:
        self.shown: Dict[str, Any] = layout
        self.behind: Optional[Dict[str, Any]] = None
        self.misplaced = False
        self.changes = 0
        self.misplace_at = misplace_at

    def changed(self, layout: Dict[str, Any]) -> None:
        self.changes += 1
        self.misplaced = self.changes == self.misplace_at
        self.behind = None if self.misplaced else self.shown
        self.shown = layout

    def look(self) -> Dict[str, Any]:
        if self.behind is not None:
            view, self.behind = seen_on_screen(self.behind), None
            return view
        view = seen_on_screen(self.shown)
        if self.misplaced and view["items"]:
            view["items"][0]["frame"]["y"] += 24
            self.misplaced = False
        return view


def describe(layout: Dict[str, Any]) -> str:
    device = layout["device"]
    return f"{device['pose']} on the {device['display']} display, bars {layout['barAxis']}"


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--socket", help="creased's socket (default: as crease finds it)")
    parser.add_argument("--rate", type=float, default=1000.0, help="encoder ticks per second (default 1000)")
    parser.add_argument("--seconds", type=float, default=2.0, help="how long the sweep lasts (default 2)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)

    period = 1.0 / args.rate
    with crease.Client(args.socket) as rig:
        hello = rig.hello()
        labels = " ".join(f"{k}={v}" for k, v in hello["labels"].items()) or "no labels"
        print(f"rig: {hello['daemon']}, app {hello['app']}, seq {hello['seq']}, {labels}")
        layouts = rig.subscribe("layout")
        nonmatches = rig.subscribe("conformance")
        first = layouts.get()
        device = StandInDevice(first["layout"])
        print(f"layout seq {first['seq']}: {describe(first['layout'])}")
        verdicts: Dict[str, int] = {}
        ticks = dropouts = mismatches = rejected = 0
        last: Optional[float] = None
        next_tick = time.monotonic()
        for angle in encoder(args.rate, args.seconds, args.seed):
            # A reading that jumps further than the hinge can move in one tick is the encoder, not the hinge.
            if last is not None and abs(angle - last) > 20:
                rig.mark(f"glitch: encoder jumped from {last} to {angle} degrees; reading dropped")
                dropouts += 1
            else:
                try:
                    rig.send({"event": "hinge", "angle": angle, "ts": time.monotonic_ns()})
                except crease.CreaseError as e:
                    print(f"rig: rejected line {e.line}: {e}", file=sys.stderr)
                    rejected += 1
                last = angle
            ticks += 1
            for push in layouts.drain():
                layout = push["layout"]
                device.changed(layout)
                print(f"layout seq {push['seq']}: {describe(layout)}")
                for look in range(1, 6):
                    reply = rig.observe(device.look(), ts=time.monotonic_ns())
                    verdict = reply["verdict"]
                    verdicts[verdict] = verdicts.get(verdict, 0) + 1
                    print(f"  look {look}: {verdict} against seq {reply['layoutSeq']}")
                    if verdict == "match":
                        break
                    if verdict == "mismatch":
                        paths = ", ".join(d["path"] for d in reply["differences"])
                        print(f"  {paths}: marked in the trace")
                        rig.mark(f"mismatch at seq {reply['layoutSeq']}: {paths}")
                        mismatches += 1
            next_tick += period
            time.sleep(max(0.0, next_tick - time.monotonic()))
        final = rig.sync()
        for push in nonmatches.drain():
            worst = push["differences"][0]
            count = len(push["differences"])
            print(f"conformance: {push['verdict']} at seq {push['layoutSeq']}: {worst['path']} expected "
                  f"{worst['expected']}, observed {worst['observed']}" + (f" and {count - 1} more" if count > 1 else ""))
        layouts.close()
        nonmatches.close()
        observed = ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items())) or "none"
        print(f"rig: {ticks} ticks, {dropouts} encoder dropout marked, {mismatches} mismatch marked, "
              f"{rejected} rejected, seq {final['seq']}, observations: {observed}")
    return 0 if rejected == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
