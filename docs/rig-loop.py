#!/usr/bin/env python3
"""A rig loop against creased: drive the device, look at its screen, ask whether it
shows what Crease computed, act on the verdict. The "device" here is a stand-in that
answers from Crease's own layouts (one step behind right after a change, and with one
control out of place once), so the loop runs anywhere; a real rig reads the screen.

Usage: rig-loop.py SOCKET
"""
import json, socket, sys, time

sock = socket.socket(socket.AF_UNIX)
sock.connect(sys.argv[1])
lines = sock.makefile("r")
ids = 0

def request(message):
    """Sends one line and returns the reply carrying its id."""
    global ids
    ids += 1
    message["id"] = ids
    sock.sendall((json.dumps(message) + "\n").encode())
    while True:
        reply = json.loads(lines.readline())
        if reply.get("id") == ids:
            return reply

def seen(layout):
    """What a rig can see of a layout: every control with its frame, the overflow menus."""
    items = [{"id": i["id"], "frame": dict(i["frame"]), "axis": bar["axis"], "shows": i["shows"]}
             for bar in layout["bars"] for i in bar["items"]]
    overflow = [o for bar in layout["bars"] for o in bar["overflow"]]
    return {"barAxis": layout["barAxis"], "items": items, "overflow": overflow, "complete": True}

class StandInDevice:
    """Shows the previous layout for the first look after a change; misplaces one control once."""
    def __init__(self):
        self.shown = request({"cmd": "layout"})["layout"]
        self.behind = None
        self.glitch = False
    def changed(self):
        self.behind, self.shown = self.shown, request({"cmd": "layout"})["layout"]
    def look(self):
        if self.behind is not None:
            view, self.behind = seen(self.behind), None
            return view
        view = seen(self.shown)
        if self.glitch:
            view["items"][0]["frame"]["y"] += 24
            self.glitch = False
        return view

device = StandInDevice()
steps = [("unfold", {"event": "hinge", "angle": 180}),
         ("rotate", {"event": "orientation", "value": "landscapeLeft"}),
         ("keyboard", {"event": "keyboard", "visible": True})]
for name, event in steps:
    request(event)
    device.changed()
    if name == "keyboard":
        device.glitch = True
    for attempt in range(5):
        verdict = request({"cmd": "observe", "observed": device.look(), "tolerance": 2})
        print(f"{name}: look {attempt + 1}: {verdict['verdict']} against seq {verdict['layoutSeq']}"
              + (f", device shows seq {verdict['matchedSeq']}" if verdict["verdict"] == "stale" else ""))
        if verdict["verdict"] == "match":
            break
        if verdict["verdict"] == "mismatch":
            for d in verdict["differences"]:
                print(f"  {d['path']}: expected {json.dumps(d['expected'])}, observed {json.dumps(d['observed'])}")
            request({"cmd": "mark", "label": f"{name}: mismatch"})
        time.sleep(0.05)   # animating or late: look again shortly
