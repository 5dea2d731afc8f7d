"""The Python client's own benchmark: is the client ever the bottleneck of a 1 kHz rig?

    python -m crease.bench --creased .build/release/creased     # starts its own daemon
    python -m crease.bench --socket /tmp/duo.sock                # or uses a running one

Prints events per second through ``send_many`` (pipelined, every event answered), the
client's CPU time per event, and the round trip of one ``send`` at a time (p50, p99,
max), next to the daemon's own read-to-publish latency from ``stats``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any, Dict, List, Optional

from .client import Client
from .daemon import Daemon


def _hinge_sweep(count: int, start: int = 0) -> List[Dict[str, Any]]:
    """A slow unfold and fold in tenths of a degree, as an encoder reports it."""
    return [{"event": "hinge", "angle": abs((i + start) % 3600 - 1800) / 10} for i in range(count)]


def _percentile(sorted_values: List[float], q: float) -> float:
    index = min(len(sorted_values) - 1, max(0, round(q * (len(sorted_values) - 1))))
    return sorted_values[index]


def measure(client: Client, events: int, round_trips: int) -> Dict[str, Any]:
    client.send_many(_hinge_sweep(1000))  # warm up both ends
    batch = _hinge_sweep(events)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    replies = client.send_many(batch)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    assert len(replies) == events

    rtts: List[float] = []
    for event in _hinge_sweep(round_trips, start=events):
        t0 = time.perf_counter_ns()
        client.send(event)
        rtts.append((time.perf_counter_ns() - t0) / 1000)
    rtts.sort()
    daemon = client.stats()["latency"]
    return {
        "sendMany": {"events": events, "seconds": round(wall, 4), "eventsPerSecond": round(events / wall),
                     "clientCpuUsPerEvent": round(cpu / events * 1e6, 2)},
        "roundTrip": {"count": round_trips, "p50Us": round(_percentile(rtts, 0.5), 1),
                      "p99Us": round(_percentile(rtts, 0.99), 1), "maxUs": round(rtts[-1], 1)},
        "daemonLatency": {k: daemon[k] for k in ("p50Us", "p99Us", "maxUs") if k in daemon},
    }


def report(figures: Dict[str, Any]) -> str:
    many, rtt, daemon = figures["sendMany"], figures["roundTrip"], figures["daemonLatency"]
    return "\n".join([
        f"send_many: {many['events']} events in {many['seconds']:.3f} s: {many['eventsPerSecond']} events/s "
        f"({many['eventsPerSecond'] / 1000:.0f}x a 1 kHz rig), client CPU {many['clientCpuUsPerEvent']} us/event",
        f"round trip (send, one at a time): p50 {rtt['p50Us']} us  p99 {rtt['p99Us']} us  max {rtt['maxUs']} us "
        f"over {rtt['count']}",
        "daemon read-to-publish latency (stats, all events): "
        + "  ".join(f"{k[:-2]} {v} us" for k, v in daemon.items()),
    ])


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m crease.bench", description=__doc__.splitlines()[0])
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--socket", help="a running creased's socket")
    where.add_argument("--creased", metavar="BIN", help="start this creased (traces into a temporary directory)")
    parser.add_argument("--events", type=int, default=100_000, help="events through send_many (default 100000)")
    parser.add_argument("--round-trips", type=int, default=5_000, help="single sends timed (default 5000)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    if args.events < 1 or args.round_trips < 1:
        parser.error("--events and --round-trips must be at least 1")

    daemon = Daemon.start(args.creased) if args.creased else None
    try:
        with (daemon.connect() if daemon else Client(args.socket)) as client:
            hello = client.hello()
            figures = measure(client, args.events, args.round_trips)
            figures["daemon"] = hello["daemon"]
            figures["python"] = sys.version.split()[0]
            figures["loadAverage"] = round(os.getloadavg()[0], 2)  # how busy the machine was (1 minute)
    finally:
        if daemon is not None:
            daemon.stop()
    if args.json:
        print(json.dumps(figures))
    else:
        print(f"crease.bench: {figures['daemon']}, Python {figures['python']}, load average {figures['loadAverage']}")
        print(report(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
