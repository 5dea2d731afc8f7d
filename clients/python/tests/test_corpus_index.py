"""The nightly trace index as docs/lab.md keeps it: `crease trace index --json` of two
rigs' traces, written by DuckDB to Parquet partitioned by rig and day, and read back."""

from __future__ import annotations

import datetime
import os
import subprocess
from pathlib import Path

import duckdb

from crease import Daemon

PARTITIONED = """
COPY (SELECT *, labels.rig AS rig, CAST(start AT TIME ZONE 'UTC' AS DATE) AS day
      FROM read_json_auto(?))
TO '{out}' (FORMAT parquet, PARTITION_BY (rig, day), OVERWRITE)
"""


def test_the_trace_index_goes_to_parquet_by_rig_and_day_and_reads_back(creased_bin: str, tmp_path: Path) -> None:
    sent = {"rigA": 7, "rigB": 12}
    for rig, count in sent.items():
        daemon = Daemon.start(creased_bin, workdir=tmp_path / rig, args=["--label", f"rig={rig}", "--label", "site=lab1"])
        with daemon.connect() as client:
            for i in range(count):
                client.hinge(10.0 + i)
        daemon.stop()
    crease = os.path.join(os.path.dirname(creased_bin), "crease")
    index = subprocess.run([crease, "trace", "index", str(tmp_path), "--json"], capture_output=True, text=True, timeout=120, check=True)
    (tmp_path / "index.jsonl").write_text(index.stdout)

    out = tmp_path / "trace-index"
    con = duckdb.connect()
    con.execute(PARTITIONED.format(out=out), [str(tmp_path / "index.jsonl")])
    today = datetime.datetime.now(datetime.timezone.utc).date()
    partitions = sorted(p.relative_to(out).as_posix() for p in out.glob("*/*") if p.is_dir())
    # A trace that started just before midnight UTC belongs to the day before: allow both.
    days = {today.isoformat(), (today - datetime.timedelta(days=1)).isoformat()}
    assert [p.split("/")[0] for p in partitions] == ["rig=rigA", "rig=rigB"], partitions
    assert all(p.split("/")[1].removeprefix("day=") in days for p in partitions), partitions

    rows = con.execute(f"""
        SELECT rig, count(*) AS files, sum(events) AS events, min(labels.site) AS site
        FROM read_parquet('{out}/*/*/*.parquet', hive_partitioning = true, union_by_name = true)
        GROUP BY rig ORDER BY rig
    """).fetchall()
    assert rows == [("rigA", 1, 7, "lab1"), ("rigB", 1, 12, "lab1")]
    # Written again (tomorrow night's run over the same index), the partitions are replaced, not doubled.
    con.execute(PARTITIONED.format(out=out), [str(tmp_path / "index.jsonl")])
    again = con.execute(f"SELECT count(*) FROM read_parquet('{out}/*/*/*.parquet', hive_partitioning = true)").fetchone()
    assert again == (2,)
