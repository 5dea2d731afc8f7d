#!/usr/bin/env python3
"""A rig's loop: stream hinge ticks from a (simulated) encoder into creased, follow the
layouts it publishes, report what the device shows, and mark glitches in the trace.

    python3 rig_loop.py --socket /tmp/duo.sock --seconds 2 --rate 1000

The encoder unfolds the hinge from shut to flat and back, with noise, and once drops
out (reads 0 for one tick, as a loose connector does). The rig notices the dropout,
marks it in the trace, and does not send the bad reading. After each new layout the
"device" (here: a copy of the layout, as a screen reader would report it) is
observed, when the daemon has the observe command. Exit 0 when every event was
accepted, 1 otherwise.
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
    items = [{"id": item["id"], "frame": item["frame"]} for bar in layout["bars"] for item in bar["items"]]
    return {"barAxis": layout["barAxis"], "verticalBarSide": layout["verticalBarSide"], "items": items}


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
        print(f"rig: {hello['daemon']}, app {hello['app']}, seq {hello['seq']}")
        layouts = rig.subscribe("layout")
        can_observe = True
        verdicts: Dict[str, int] = {}
        ticks = glitches = rejected = 0
        last: Optional[float] = None
        next_tick = time.monotonic()
        for angle in encoder(args.rate, args.seconds, args.seed):
            # A reading that jumps further than the hinge can move in one tick is the encoder, not the hinge.
            if last is not None and abs(angle - last) > 20:
                rig.mark(f"glitch: encoder jumped from {last} to {angle} degrees; reading dropped")
                glitches += 1
            else:
                try:
                    rig.send({"event": "hinge", "angle": angle, "ts": time.monotonic_ns()})
                except crease.CreaseError as e:
                    print(f"rig: rejected: {e}", file=sys.stderr)
                    rejected += 1
                last = angle
            ticks += 1
            for push in layouts.drain():
                layout = push["layout"]
                device = layout["device"]
                print(f"layout seq {push['seq']}: {device['pose']} on the {device['display']} display, "
                      f"bars {layout['barAxis']}")
                if can_observe:
                    try:
                        verdict = rig.observe(seen_on_screen(layout), ts=time.monotonic_ns())["verdict"]
                        verdicts[verdict] = verdicts.get(verdict, 0) + 1
                    except crease.CreaseError as e:
                        if e.code != "unknownCommand":
                            raise
                        can_observe = False
                        print("rig: this creased cannot observe yet; only following layouts")
            next_tick += period
            time.sleep(max(0.0, next_tick - time.monotonic()))
        final = rig.sync()
        layouts.close()
        observed = ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items())) or "none"
        print(f"rig: {ticks} ticks, {glitches} glitch marked, {rejected} rejected, seq {final['seq']}, "
              f"observations: {observed}")
    return 0 if rejected == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
