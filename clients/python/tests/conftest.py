# The crease plugin itself comes in through its pytest11 entry point, as it does for a
# rig's own tests; pytester runs inner pytest sessions for the plugin's tests.
pytest_plugins = ["pytester"]
