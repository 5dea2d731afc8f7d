# The crease plugin itself comes in through its pytest11 entry point, as it does for a
# rig's own tests; pytester runs inner pytest sessions for the plugin's tests.
pytest_plugins = ["pytester"]


import subprocess
from pathlib import Path
from typing import Callable

import pytest

#: The repository's rig files (docs/rig-file.md).
RIGS = Path(__file__).resolve().parents[3] / "docs" / "rigs"


@pytest.fixture
def creased_bin(request: pytest.FixtureRequest) -> str:
    """The creased these tests run (--creased-bin), for inner sessions and frameworks that start their own."""
    binary = request.config.getoption("--creased-bin")
    if not binary:
        pytest.fail("these tests need --creased-bin", pytrace=False)
    return str(binary)


@pytest.fixture
def plan_tour(creased_bin: str) -> Callable[[Path, str, int], Path]:
    """``crease plan --tour`` of ``app`` on the simulator's rig file, to ``max_depth``, written to ``out``."""
    crease = str(Path(creased_bin).with_name("crease"))

    def plan(out: Path, app: str, max_depth: int) -> Path:
        subprocess.run([crease, "plan", "--tour", "--app", app, "--rig", str(RIGS / "simulator.json"),
                        "--max-depth", str(max_depth), "-o", str(out)], check=True, timeout=300, capture_output=True)
        return out
    return plan


@pytest.fixture(autouse=True)
def _no_labgrid_plugin_inside(monkeypatch: pytest.MonkeyPatch) -> None:
    """labgrid's pytest plugin (loaded by its entry point wherever labgrid is installed)
    rewrites the terminal summary that pytester reads: inner sessions run without it,
    unless a test (the labgrid one) asks for it."""
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p no:labgrid")
