"""crease report's page in a real browser (selenium driving Debian's chromium, headless):
it loads nothing from outside, its figures are the trace tools' figures, the player scrubs
with the keyboard, a moment's link goes to its frame, and a screenshot shows beside it."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import zlib
from pathlib import Path
from typing import Iterator

import pytest

from crease import Daemon

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.chrome.options import Options  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import Select  # noqa: E402

TRACE = Path(__file__).resolve().parents[3] / "Traces" / "rig-observations.jsonl"


def png(width: int, height: int) -> bytes:
    """A solid grey PNG, made with the standard library."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    rows = b"".join(b"\x00" + b"\x80\x80\x80" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


@pytest.fixture
def browser() -> Iterator[webdriver.Chrome]:
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not chromium or not driver:
        pytest.fail("chromium and chromedriver are needed (scripts/setup installs them)", pytrace=False)
    options = Options()
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(flag)
    options.binary_location = chromium
    chrome = webdriver.Chrome(service=Service(driver), options=options)
    try:
        yield chrome
    finally:
        chrome.quit()


def test_the_report_is_one_page_that_scrubs_and_jumps(creased_daemon: Daemon, tmp_path: Path, browser: webdriver.Chrome) -> None:
    crease = str(Path(creased_daemon.binary).with_name("crease"))
    shots = tmp_path / "shots"
    shots.mkdir()
    (shots / "gen-look-5.png").write_bytes(png(40, 80))   # the look that found a control out of place
    report = tmp_path / "report.html"
    made = subprocess.run([crease, "report", str(TRACE), "-o", str(report), "--screenshots", str(shots)],
                          capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    browser.get(report.as_uri())
    # Self-contained: everything it loaded was inline.
    loaded = browser.execute_script("return performance.getEntriesByType('resource').map(function (e) { return e.name; })")
    assert all(name.startswith("data:") for name in loaded), loaded
    # The figures are the trace tools' own.
    conformance = json.loads(subprocess.run([crease, "trace", "conformance", str(TRACE), "--json"],
                                            capture_output=True, text=True, timeout=60).stdout)
    shown = browser.find_element(By.CSS_SELECTOR, "#conformance td").text
    assert shown == f"{conformance['match']} match, {conformance['stale']} stale, {conformance['mismatch']} mismatch"
    glitch_lines = subprocess.run([crease, "trace", "glitches", str(TRACE), "--json"], capture_output=True, text=True,
                                  timeout=60).stdout.splitlines()
    kinds = [json.loads(line)["kind"] for line in glitch_lines if line.startswith('{"kind"')]
    order = ["flapping", "flash", "lostItem", "occluded", "offscreen", "sideJump", "overBudget", "mismatch", "stale"]
    # The model's own glitches, and apart from them what the device showed against the model.
    model = [k for k in sorted(set(kinds), key=order.index) if k not in ("mismatch", "stale")]
    device = [k for k in sorted(set(kinds), key=order.index) if k in ("mismatch", "stale")]
    assert browser.find_element(By.CSS_SELECTOR, "#glitches td").text == (", ".join(f"{k} {kinds.count(k)}" for k in model) or "none")
    assert browser.find_element(By.CSS_SELECTOR, "#device-glitches td").text == (", ".join(f"{k} {kinds.count(k)}" for k in device) or "no mismatch")
    # The device's looks are listed first, the mismatches at their head.
    looks = browser.find_elements(By.CSS_SELECTOR, "#device-moments li[data-verdict]")
    verdicts = [li.get_attribute("data-verdict") for li in looks]
    assert verdicts and verdicts == sorted(verdicts, key=["mismatch", "stale", "match"].index), verdicts
    # The player: one frame shown; End, then left, with the keyboard.
    frames = browser.find_elements(By.CSS_SELECTOR, "#frames .frame")
    visible = [f for f in frames if f.is_displayed()]
    assert len(frames) > 5 and len(visible) == 1 and visible[0].get_attribute("id") == "frame-0"
    body = browser.find_element(By.TAG_NAME, "body")
    body.send_keys(Keys.END)
    assert body.get_attribute("data-frame") == str(len(frames) - 1)
    body.send_keys(Keys.ARROW_LEFT)
    assert body.get_attribute("data-frame") == str(len(frames) - 2)
    assert "digest" in browser.find_element(By.ID, "caption").text
    # A mismatch's link goes to its frame: the observation drawn over the layout, its
    # differences listed, the device's screenshot beside it.
    browser.find_element(By.CSS_SELECTOR, "#moments li.observation.mismatch a").click()
    shown_frame = next(f for f in frames if f.is_displayed())
    assert shown_frame.get_attribute("data-verdict") == "mismatch"
    assert shown_frame.find_elements(By.CSS_SELECTOR, "g.observed")
    assert "items[" in shown_frame.find_element(By.CSS_SELECTOR, "ul.differences").text
    image = shown_frame.find_element(By.CSS_SELECTOR, "figure.screenshot img")
    assert browser.execute_script("return arguments[0].complete && arguments[0].naturalWidth", image) == 40
    # The why of a mismatch's expected value sits under it; choosing a control shows, under the
    # frame at the cursor, the rule that placed it there and nothing else.
    why_lines = shown_frame.find_elements(By.CSS_SELECTOR, "ul.differences .mismatch-why")
    assert why_lines and all(line.text.startswith("expected, ") for line in why_lines)
    choice = Select(browser.find_element(By.ID, "why-subject"))
    options = [o.get_attribute("value") for o in choice.options]
    assert options[0] == "field:barAxis" and any(v.startswith("item:") for v in options)
    item = next(v for v in options if v.startswith("item:") and shown_frame.find_elements(By.CSS_SELECTOR, f'ul.why li[data-subject="{v}"]'))
    choice.select_by_value(item)
    shown_why = [li for li in shown_frame.find_elements(By.CSS_SELECTOR, "ul.why li") if li.is_displayed()]
    assert len(shown_why) == 1 and shown_why[0].get_attribute("data-subject") == item
    assert shown_why[0].text.startswith(f"item {item[len('item:'):]}: ") and " · " in shown_why[0].text
    rules = [dt.text for dt in browser.find_elements(By.CSS_SELECTOR, "#rules dt")]
    assert any(f" · {rule} · " in shown_why[0].text for rule in rules)
