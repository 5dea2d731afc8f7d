#!/usr/bin/env python3
"""An OpenHTF station test measured by creased: each phase is marked in the trace, its
verdicts, glitches and latency become measurements with validators, and its trace slice
and timeline are attached to the test record.

    python3 openhtf_station.py --socket /tmp/rig.sock --record record.json

The second phase reports a control 30 points out of place: its crease_mismatches
measurement fails, and so does the test (exit 1).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import openhtf as htf  # type: ignore[import-untyped]
from openhtf.output.callbacks import json_factory  # type: ignore[import-untyped]

from crease.openhtf import CreasePlug, crease_phase


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--socket", required=True)
    parser.add_argument("--record", required=True, help="where OpenHTF writes the JSON test record")
    args = parser.parse_args()
    plug = CreasePlug.on(args.socket)

    @crease_phase(budget_us=1000, plug=plug)
    def unfold(test: Any, crease: CreasePlug) -> None:
        for angle in (0, 60, 120, 180):
            crease.client.send({"event": "hinge", "angle": angle})
        layout = crease.client.layout()
        items = [{"id": i["id"], "frame": i["frame"]} for b in layout["bars"] for i in b["items"]]
        crease.client.observe({"barAxis": layout["barAxis"], "items": items})

    @crease_phase(budget_us=1000, plug=plug)
    def landscape(test: Any, crease: CreasePlug) -> None:
        crease.client.send({"event": "orientation", "value": "landscapeLeft"})
        first = next(i for b in crease.client.layout()["bars"] for i in b["items"])
        crease.client.observe({"items": [{"id": first["id"], "frame": dict(first["frame"], y=first["frame"]["y"] + 30)}]})

    test = htf.Test(unfold, landscape, test_name="duo fold station")
    test.add_output_callbacks(json_factory.OutputToJSON(args.record, indent=2))
    test.execute(test_start=lambda: "duo-0042")
    record = json.loads(open(args.record).read())
    for phase in record["phases"]:
        if not phase["measurements"]:
            continue
        values = ", ".join(f"{k}={m['measured_value']} {m['outcome']}" for k, m in sorted(phase["measurements"].items()))
        print(f"{phase['name']}: {phase['outcome']}: {values}; attached {', '.join(sorted(phase['attachments']))}")
    print(f"test {record['outcome']}")
    return 0 if record["outcome"] == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
