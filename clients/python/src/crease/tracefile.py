"""Reading a trace file's records as the Python tools do: a regular file of bounded size,
its first line a trace header, a tail cut by a crash ignored. Standard library only."""

from __future__ import annotations

import json
import os
import stat
from typing import Any, Dict, Iterator, Tuple, Type

__all__ = ["trace_records"]


def trace_records(path: str, limit: int, error: Type[ValueError], what: str) -> Iterator[Tuple[int, Dict[str, Any]]]:
    """(line number, record) of every record of ``path``, the header first. Raises ``error``
    for a file that is not regular, larger than ``limit`` bytes, not a trace, or not JSON
    before its last line; ``what`` says who reads it ("a replay")."""
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise error(f"{path} is not a regular file: traces are read only from regular files")
    if st.st_size > limit:
        raise error(f"{path} is {st.st_size} bytes, more than the {limit} {what} reads")
    header = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as e:
                if number > 1 and not line.endswith("\n"):
                    return  # a file cut by a crash: read up to its last complete record
                raise error(f"{path}:{number}: not JSON: {e}") from None
            if not header:
                if not isinstance(record, dict) or record.get("crease") != "trace":
                    raise error(f"{path}: not a Crease trace (its first line is no trace header)")
                header = True
            yield number, record
    if not header:
        raise error(f"{path}: empty, no trace header")
