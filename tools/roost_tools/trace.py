"""Reading roost's binary traces (format: src/trace/trace_format.hpp)."""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

VERSION = 1
RUNTIME_BLOCK = 0xFFFF
KIND = {1: "task_begin", 2: "task_end", 3: "task_resume", 4: "touch", 5: "sleep_begin", 6: "sleep_end",
        7: "iteration_begin", 8: "iteration_end", 9: "touch_rows_read", 10: "touch_rows_write",
        11: "touch_rows_read_write", 12: "spawn", 13: "steal", 14: "idle_begin", 15: "idle_end"}
RECORD = np.dtype([("t_ns", "<u8"), ("a", "<u8"), ("b", "<u8"), ("index", "<u4"), ("kind", "<u2"), ("worker", "<u2")])


class TraceError(ValueError):
    """A file that is not a roost trace, is of another version, or is cut short (names the byte offset)."""


@dataclass
class Trace:
    workers: int
    start_ns: int
    topology: str
    l2_bytes: int
    llc_bytes: int
    llc_domain: list[int]
    records: np.ndarray = field(repr=False)

    def of_kind(self, *names: str) -> np.ndarray:
        codes = [k for k, v in KIND.items() if v in names]
        return self.records[np.isin(self.records["kind"], codes)]


def read(path: str | Path) -> Trace:
    path = Path(path)
    data = path.read_bytes()
    pos = 0

    def take(fmt: str, what: str):
        nonlocal pos
        size = struct.calcsize(fmt)
        if pos + size > len(data):
            raise TraceError(f"{path}: truncated at byte {pos} while reading {what}")
        out = struct.unpack_from(fmt, data, pos)
        pos += size
        return out

    if data[:8] != b"ROOSTTRC":
        raise TraceError(f"{path}: not a roost trace (no ROOSTTRC magic at byte 0)")
    pos = 8
    (version,) = take("<I", "the version")
    if version != VERSION:
        raise TraceError(f"{path}: trace format version {version} at byte 8; this roost-analyze reads version {VERSION}")
    workers, start_ns, n = take("<IQI", "the header")
    if pos + n > len(data):
        raise TraceError(f"{path}: truncated at byte {pos} in the topology")
    topology = data[pos:pos + n].decode("utf-8", "replace")
    pos += n
    l2, llc = take("<QQ", "the cache sizes")
    domains = list(take(f"<{workers}I", "the cache domains")) if workers else []
    chunks = []
    while pos < len(data):
        worker, count = take("<IQ", "a block header")
        if worker != RUNTIME_BLOCK and worker >= workers:
            raise TraceError(f"{path}: block for worker {worker} at byte {pos - 12} but the trace has {workers} workers")
        size = count * RECORD.itemsize
        if pos + size > len(data):
            raise TraceError(f"{path}: truncated at byte {len(data)}: block of worker {worker} promises {count} records")
        chunks.append(np.frombuffer(data, dtype=RECORD, count=count, offset=pos))
        pos += size
    records = np.concatenate(chunks) if chunks else np.zeros(0, dtype=RECORD)
    return Trace(workers, start_ns, topology, l2, llc, domains, records)
