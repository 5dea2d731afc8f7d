# The crease plugin itself comes in through its pytest11 entry point, as it does for a
# rig's own tests; pytester runs inner pytest sessions for the plugin's tests.
pytest_plugins = ["pytester"]


import pytest


@pytest.fixture
def creased_bin(request: pytest.FixtureRequest) -> str:
    """The creased these tests run (--creased-bin), for inner sessions and frameworks that start their own."""
    binary = request.config.getoption("--creased-bin")
    if not binary:
        pytest.fail("these tests need --creased-bin", pytrace=False)
    return str(binary)


@pytest.fixture(autouse=True)
def _no_labgrid_plugin_inside(monkeypatch: pytest.MonkeyPatch) -> None:
    """labgrid's pytest plugin (loaded by its entry point wherever labgrid is installed)
    rewrites the terminal summary that pytester reads: inner sessions run without it,
    unless a test (the labgrid one) asks for it."""
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p no:labgrid")
