"""Reading roost's binary traces (format: src/trace/trace_format.hpp): a header, then chunks of records that the
workers wrote as their buffers filled, with raw clock ticks that the reader turns into ns since the start."""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

VERSION = 2
RUNTIME_LANE = 0xFFFF
END_LANE = 0xFFFE
RUNTIME_BLOCK = RUNTIME_LANE  # the records' `worker` for the runtime's events
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
    records: np.ndarray = field(repr=False)  # lane by lane (workers in order, then the runtime), t_ns since start
    complete: bool = True  # False: no end chunk, the program stopped before its runtime was destroyed

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
    workers, start_ns, start_ticks, n = take("<IQQI", "the header")
    if pos + n > len(data):
        raise TraceError(f"{path}: truncated at byte {pos} in the topology")
    topology = data[pos:pos + n].decode("utf-8", "replace")
    pos += n
    l2, llc = take("<QQ", "the cache sizes")
    domains = list(take(f"<{workers}I", "the cache domains")) if workers else []
    lanes: dict[int, list[np.ndarray]] = {}
    complete = False
    clock = (start_ticks, start_ns)  # the last chunk's (ticks, ns)
    while pos < len(data):
        at = pos
        lane, count, ticks, ns = take("<IIQQ", "a chunk header")
        if lane >= workers and lane not in (RUNTIME_LANE, END_LANE):
            raise TraceError(f"{path}: chunk for worker {lane} at byte {at} but the trace has {workers} workers")
        size = count * RECORD.itemsize
        if pos + size > len(data):
            raise TraceError(f"{path}: truncated at byte {len(data)}: the chunk of lane {lane} at byte {at} "
                             f"promises {count} records")
        lanes.setdefault(lane, []).append(np.frombuffer(data, dtype=RECORD, count=count, offset=pos))
        complete = complete or lane == END_LANE
        clock = (ticks, ns)
        pos += size
    chunks = [c for lane in sorted(lanes) for c in lanes[lane]]
    records = np.concatenate(chunks) if chunks else np.zeros(0, dtype=RECORD)
    records["t_ns"] = _ticks_to_ns(records["t_ns"], start_ticks, start_ns, clock)
    return Trace(workers, start_ns, topology, l2, llc, domains, records, complete)


def _ticks_to_ns(t: np.ndarray, start_ticks: int, start_ns: int, clock: tuple[int, int]) -> np.ndarray:
    """As the C++ reader does: ns since the start from the last chunk's clock pair, 0 at or before the start."""
    ticks, ns = clock
    ns_per_tick = float(ns - start_ns) / float(ticks - start_ticks) if ticks > start_ticks else 1.0
    since = (t - np.uint64(start_ticks)).astype(np.float64) * ns_per_tick
    return np.where(t > np.uint64(start_ticks), since, 0).astype(np.uint64)
