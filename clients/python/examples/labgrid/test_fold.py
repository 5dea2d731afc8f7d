"""A rig test as labgrid runs it: pytest --lg-env env.yaml test_fold.py"""


def test_unfolded_layout_is_what_the_device_shows(target):  # type: ignore[no-untyped-def]
    crease = target.get_driver("CreaseDriver")
    target.activate(crease)
    crease.mark("labgrid: unfold")
    for angle in (0, 45, 90, 135, 180):
        crease.send({"event": "hinge", "angle": angle})
    layout = crease.layout()
    assert layout["device"]["pose"] == "fullyOpen"
    # What the rig read off the screen (here: the layout itself, as a device that is right shows it).
    items = [{"id": i["id"], "frame": i["frame"]} for bar in layout["bars"] for i in bar["items"]]
    assert crease.observe({"barAxis": layout["barAxis"], "items": items})["verdict"] == "match"
