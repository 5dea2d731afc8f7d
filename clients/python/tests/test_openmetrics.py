"""`crease stats --openmetrics` and `--prometheus` from a real creased, read by
prometheus_client's own parsers (OpenMetrics, and the Prometheus text format that
node_exporter's textfile collector reads): the text must parse, and the families must
hold what stats says."""

import json
import os
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families
from prometheus_client.parser import text_string_to_metric_families as prometheus_text_families

ROOT = Path(__file__).resolve().parents[3]
CREASED = os.environ.get("CREASE_BIN", str(ROOT / ".build/debug/creased"))
CREASE = str(Path(CREASED).with_name("crease"))


def request(path, line):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(30)
        s.connect(path)
        s.sendall((line + "\n").encode())
        data = b""
        while not data.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    return json.loads(data)


@pytest.fixture
def daemon():
    with tempfile.TemporaryDirectory(prefix="crease-om-") as tmp:
        sock = os.path.join(tmp, "rig.sock")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CREASE_", "LISTEN_", "NOTIFY_"))}
        proc = subprocess.Popen(
            [CREASED, "--socket", sock, "--trace-dir", os.path.join(tmp, "traces")],
            env=env, stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 30
        while not os.path.exists(sock):
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() < deadline, "creased did not start"
            time.sleep(0.02)
        try:
            yield sock
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def test_stats_as_openmetrics_parse_with_prometheus_client(daemon):
    for angle in (10, 90, 180, 400):  # the last one is rejected
        request(daemon, json.dumps({"event": "hinge", "angle": angle, "id": angle}))
    text = subprocess.run([CREASE, "stats", "--socket", daemon, "--openmetrics"],
                          check=True, capture_output=True, text=True).stdout
    stats = request(daemon, '{"cmd":"stats"}')["stats"]

    families = {f.name: f for f in text_string_to_metric_families(text)}
    assert families["crease_events"].type == "counter"
    assert families["crease_events"].samples[0].value == 3
    assert families["crease_rejected_lines"].samples[0].value == 1
    assert families["crease_resident_memory_bytes"].type == "gauge"
    assert families["crease_trace_written_bytes"].unit == "bytes"

    latency = families["crease_latency_seconds"]
    assert latency.type == "histogram" and latency.unit == "seconds"
    buckets = [s for s in latency.samples if s.name.endswith("_bucket")]
    bounds = [float(s.labels["le"]) for s in buckets]
    counts = [s.value for s in buckets]
    assert bounds == sorted(bounds) and bounds[-1] == float("inf")
    assert counts == sorted(counts), "cumulative buckets never decrease"
    count = next(s.value for s in latency.samples if s.name == "crease_latency_seconds_count")
    assert count == counts[-1] == 3
    total = next(s.value for s in latency.samples if s.name == "crease_latency_seconds_sum")
    assert 0 < total < 3 * 60
    # The bounds are the ones stats reports, in seconds.
    assert bounds[:-1] == [le / 1e6 for le, _ in stats["latency"]["buckets"]]


def test_prometheus_text_types_every_counter(daemon):
    request(daemon, '{"event":"hinge","angle":90,"id":1}')
    text = subprocess.run([CREASE, "stats", "--socket", daemon, "--prometheus"],
                          check=True, capture_output=True, text=True).stdout
    families = {f.name: f for f in prometheus_text_families(text)}
    # Read as node_exporter reads it, no family is left untyped.
    assert all(f.type != "unknown" for f in families.values()), [n for n, f in families.items() if f.type == "unknown"]
    assert families["crease_events"].type == "counter"
    assert families["crease_events"].samples[0].value == 1
    assert families["crease_latency_seconds"].type == "histogram"


def test_openmetrics_fail_to_parse_when_broken(daemon):
    # The parser used above does reject bad text: the check can fail.
    text = subprocess.run([CREASE, "stats", "--socket", daemon, "--openmetrics"],
                          check=True, capture_output=True, text=True).stdout
    with pytest.raises(ValueError):
        list(text_string_to_metric_families(text.replace("# EOF\n", "")))
