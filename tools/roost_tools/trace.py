"""Reading roost's binary traces (format: src/trace/trace_format.hpp): a header, then chunks of records that the
workers wrote as their buffers filled, with raw clock ticks that the reader turns into ns since the start."""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .inputs import read_input

VERSION = 6
OLDEST_VERSION = 3  # version 3 lacks steal_failures (a failed attempt was a steal record with b = 0)
# Version 3's failed attempts are read as one steal_failures record each (a = 1 attempt, b = the victim).
STEAL, STEAL_FAILURES = 13, 17
# Version 5 stores a touch under 4 GiB short (kinds 18-20: the mode in the kind, the size in index); the reader
# gives it as the touch record (4) it stands for, so nothing downstream tells the two forms apart.
SHORT_TOUCH = (18, 19, 20)
# Version 6: the end of the lane's latest task_begin without its serial (21, given as a task_end), and a
# touch_rows like its chunk's previous one without b and index (22-24, given as touch_rows 9-11).
TASK_END_LAST = 21
ROWS_SAME = (22, 23, 24)
FIRST_KIND_AFTER = {3: SHORT_TOUCH[0], 4: SHORT_TOUCH[0], 5: TASK_END_LAST, 6: 25}
UNRECORDED = 2**64 - 1  # a task_begin's parent serial (b) when its spawner was not recorded (version 4)
MAX_WORKERS = 4096  # roost::max_workers: a header with more (or none) is damaged
RUNTIME_LANE = 0xFFFF
END_LANE = 0xFFFE
RUNTIME_BLOCK = RUNTIME_LANE  # the records' `worker` for the runtime's events
KIND = {1: "task_begin", 2: "task_end", 3: "task_resume", 4: "touch", 5: "sleep_begin", 6: "sleep_end",
        7: "iteration_begin", 8: "iteration_end", 9: "touch_rows_read", 10: "touch_rows_write",
        11: "touch_rows_read_write", 12: "spawn", 13: "steal", 14: "idle_begin", 15: "idle_end", 16: "memory",
        17: "steal_failures", 18: "touch_read", 19: "touch_write", 20: "touch_read_write", 21: "task_end_last",
        22: "touch_rows_read_same", 23: "touch_rows_write_same", 24: "touch_rows_read_write_same"}
RECORD = np.dtype([("t_ns", "<u8"), ("a", "<u8"), ("b", "<u8"), ("index", "<u4"), ("kind", "<u2"), ("worker", "<u2")])
# The columns each kind stores (trace_format.hpp); a task_begin's serial is implied by its place in its lane.
_TOUCH = (4, 9, 10, 11)
STORES_A = np.isin(np.arange(25), (2, 3, 12, 13, 16, 17) + _TOUCH + SHORT_TOUCH + ROWS_SAME)
STORES_B = np.isin(np.arange(25), (1, 13, 16, 17) + _TOUCH)
STORES_INDEX = np.isin(np.arange(25), (1, 12, 16) + _TOUCH + SHORT_TOUCH)


class TraceError(ValueError):
    """A file that is not a roost trace, is of another version, is damaged, or is cut short inside its header
    (names the byte offset)."""


def ancestry_loop(serial: int) -> TraceError:
    """The error for a task whose spawners' links lead back to it: only a damaged file has one."""
    return TraceError(f"task serial {serial} is its own ancestor (its spawners' links form a loop): the trace is damaged")


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
    # The file ends inside a chunk (a write that failed part-way: a full disk, a file size limit, a program
    # killed while writing): its size, where it was cut, and the byte from which on the records are lost (the
    # cut chunk's start, or the file's end when only the chunk's padding is missing). None: no chunk was cut.
    cut_at: int | None = None
    lost_from: int | None = None

    @property
    def simulated(self) -> bool:
        """A run of the simulated platform: its times are virtual (trace_format.hpp's header)."""
        return self.topology.startswith("simulated: ")

    def of_kind(self, *names: str) -> np.ndarray:
        codes = [k for k, v in KIND.items() if v in names]
        return self.records[np.isin(self.records["kind"], codes)]


def read(path: str | Path) -> Trace:
    """The trace at `path`. A file cut inside a chunk is read up to that chunk (Trace.cut_at says so); one
    cut inside its header is a TraceError, as is a file that is no trace or cannot be read."""
    path = Path(path)
    data = read_input(path, TraceError, ", not a trace; give the file ROOST_TRACE named")
    pos = 0

    def take(fmt: str, what: str):
        nonlocal pos
        size = struct.calcsize(fmt)
        if pos + size > len(data):
            # Where the file ends, and the field's bytes: "at byte 12" of a file cut at 32 named where the field
            # began (an outside-user campaign).
            raise TraceError(f"{path}: truncated at byte {len(data)}, inside {what} (bytes {pos} to {pos + size - 1})")
        out = struct.unpack_from(fmt, data, pos)
        pos += size
        return out

    if data[:8] != b"ROOSTTRC":
        raise TraceError(f"{path}: not a roost trace (no ROOSTTRC magic at byte 0)")
    pos = 8
    (version,) = take("<I", "the version")
    if not OLDEST_VERSION <= version <= VERSION:
        raise TraceError(f"{path}: trace format version {version} at byte 8; this roost-analyze reads versions "
                         f"{OLDEST_VERSION} to {VERSION}")
    workers, start_ns, start_ticks, n = take("<IQQI", "the header")
    # A damaged count of 70,000 took timeline minutes and gigabytes before anything was said (an outside-user
    # campaign); roost writes 1 to max_workers.
    if not 1 <= workers <= MAX_WORKERS:
        raise TraceError(f"{path}: damaged at byte 12: the header says {workers} workers; roost writes 1 to "
                         f"{MAX_WORKERS}")
    if start_ticks >= 2**63:  # a clock that has run 2^63 ticks: the byte is damaged (times are int64 below)
        raise TraceError(f"{path}: damaged at byte 24: the start clock {start_ticks} is 2^63 or more")
    if pos + n > len(data):
        raise TraceError(f"{path}: truncated at byte {len(data)}, inside the topology (bytes {pos} to {pos + n - 1})")
    topology = data[pos:pos + n].decode("utf-8", "replace")
    pos += n
    l2, llc = take("<QQ", "the cache sizes")
    domains = list(take(f"<{workers}I", "the cache domains")) if workers else []
    # A domain numbers the distinct last-level caches of the workers (runtime.cpp), so it is below their count.
    if domains and max(domains) >= workers:
        w = domains.index(max(domains))
        raise TraceError(f"{path}: damaged: worker {w}'s cache domain is {max(domains)}; a trace of {workers} "
                         f"worker{'s' if workers > 1 else ''} numbers its domains 0 to {workers - 1}")
    lanes: dict[int, list[tuple]] = {}
    complete = False
    clock = (start_ticks, start_ns)  # the last chunk's (ticks, ns)
    cut_at = lost_from = None
    while pos < len(data):
        at = pos
        if pos + 48 > len(data):  # cut inside a chunk's header: the chunk is lost
            cut_at, lost_from = len(data), at
            break
        lane, count, ticks, ns, base, na, nb, ni, _ = take("<IIQQQIIII", "a chunk header")
        # Every chunk is written after the header's clock was read. The monotonic ns only: a CPU's tick counter
        # may run a little behind another's (tracer.hpp, rebase).
        if ns < start_ns:
            raise TraceError(f"{path}: damaged: the chunk at byte {at} was written at {ns} ns, before the trace's "
                             f"start at {start_ns} ns (bytes 16-23)")
        if lane >= workers and lane not in (RUNTIME_LANE, END_LANE):
            raise TraceError(f"{path}: chunk for worker {lane} at byte {at} but the trace has {workers} workers")
        if max(na, nb, ni) > count or (lane == END_LANE and count):
            raise TraceError(f"{path}: chunk of lane {lane} at byte {at} is damaged: {count} records with "
                             f"{na}, {nb}, {ni} values of a, b, index")
        body = 8 * na + 8 * nb + 4 * count + 4 * ni + count
        if pos + body > len(data):  # cut inside the chunk's records: the whole chunks before it are kept
            cut_at, lost_from = len(data), at
            break
        columns = []
        for dtype, n in (("<u8", na), ("<u8", nb), ("<u4", count), ("<u4", ni), ("u1", count)):
            columns.append(np.frombuffer(data, dtype=dtype, count=n, offset=pos))
            pos += n * np.dtype(dtype).itemsize
        lanes.setdefault(lane, []).append((base, *columns))
        complete = complete or lane == END_LANE
        clock = (ticks, ns)
        pos = at + 48 + (body + 7) // 8 * 8
        if pos > len(data):  # cut inside the chunk's padding: its records are whole, what followed is lost
            cut_at = lost_from = len(data)
    convert = _ticks_to_ns(start_ticks, start_ns, clock)
    lane_order = [lane for lane in sorted(lanes) if lane != END_LANE]
    sizes = [sum(len(c[-1]) for c in lanes[lane]) for lane in lane_order]
    records = np.zeros(sum(sizes), dtype=RECORD)
    at = 0
    for lane, n in zip(lane_order, sizes):
        _decode_lane(path, version, lane, workers, lanes[lane], convert, records[at:at + n])
        at += n
    _check_records(path, version, records)
    return Trace(workers, start_ns, topology, l2, llc, domains, records, complete, cut_at, lost_from)


def _check_records(path: Path, version: int, records: np.ndarray) -> None:
    """Records the runtime cannot write (an outside-user campaign found each accepted, and the subcommands
    then disagreed): a TraceError naming the first."""
    kind = records["kind"]
    touch = kind == 4
    if np.any(touch & (records["index"] > 2)):
        bad = records[touch & (records["index"] > 2)][0]
        raise TraceError(f"{path}: damaged: a touch of mode {int(bad['index'])} in lane {int(bad['worker'])}; "
                         "modes are 0 (read), 1 (write) and 2 (read-write)")
    # roost::touch refuses a null base with a non-zero size, and a region whose end (one past its last byte) is
    # no address (usage_error; api/data.cpp, region_outside_address_space). An empty touch names no byte.
    base, size = records["a"][touch], records["b"][touch]
    bad = (size > 0) & ((base == 0) | (size > np.uint64(2**64 - 1) - base))
    if np.any(bad):
        raise TraceError(f"{path}: damaged: a touch of {int(size[bad][0])} bytes at {int(base[bad][0]):#x}, "
                         "which roost::touch refuses (a null base, or past the end of the address space)")
    if version >= 4 and np.any((kind == STEAL) & (records["b"] != 1)):
        raise TraceError(f"{path}: damaged: a steal record with b = {int(records['b'][(kind == STEAL) & (records['b'] != 1)][0])}; "
                         f"version {version} writes b = 1 (failed attempts are steal_failures records)")
    # Iterations bracket each runtime::run in the runtime's lane: begin, end, begin, ... (a trace cut short may
    # end on a begin).
    bracket = records[(kind == 7) | (kind == 8)]
    marks = bracket["kind"][np.argsort(bracket["t_ns"], kind="stable")]
    if len(marks) and (np.any(marks[0::2] != 7) or np.any(marks[1::2] != 8)):
        raise TraceError(f"{path}: damaged: its iteration_begin and iteration_end records do not alternate "
                         "(each run() has one of each, in that order)")


def _decode_lane(path: Path, version: int, lane: int, workers: int, chunks: list[tuple], convert,
                 out: np.ndarray) -> None:
    """One lane's chunks, in order, as whole records into `out` (zeros)."""
    bases, a, b, dt, index, kinds = zip(*chunks)
    kinds = np.concatenate(kinds)
    if not len(kinds):
        return
    unknown = kinds[(kinds == 0) | (kinds >= FIRST_KIND_AFTER[version])]
    if len(unknown):
        raise TraceError(f"{path}: lane {lane} holds a record of unknown kind {int(unknown[0])}")
    out["t_ns"] = convert(np.repeat(np.array(bases, dtype=np.uint64), [len(d) for d in dt]) + np.concatenate(dt))
    out["kind"] = kinds
    out["worker"] = lane
    for name, stores, column in (("a", STORES_A, a), ("b", STORES_B, b), ("index", STORES_INDEX, index)):
        values = np.concatenate(column)
        where = stores[kinds]
        if np.count_nonzero(where) != len(values):
            raise TraceError(f"{path}: lane {lane} is damaged: its kinds use {np.count_nonzero(where)} values of "
                             f"{name}, its chunks hold {len(values)}")
        out[name][where] = values
    begins = kinds == 1
    ends_last = kinds == TASK_END_LAST
    if (np.any(begins) or np.any(ends_last)) and lane >= workers:
        raise TraceError(f"{path}: a task's record outside a worker's lane (lane {lane})")
    # A task_begin's serial is its count in the lane; a task_end_last's, that of the latest task_begin before it.
    so_far = np.cumsum(begins, dtype=np.uint64)
    if np.any(ends_last & (so_far == 0)):
        raise TraceError(f"{path}: lane {lane} is damaged: a task_end_last before any task_begin")
    lane_bits = np.uint64(lane) << np.uint64(48)
    out["a"][begins] = lane_bits | so_far[begins]
    out["a"][ends_last] = lane_bits | so_far[ends_last]
    out["kind"][ends_last] = 2
    same = (kinds >= ROWS_SAME[0]) & (kinds <= ROWS_SAME[-1])
    if np.any(same):
        # b and index of the chunk's latest whole touch_rows before it; each chunk's first is whole.
        whole = (kinds >= 9) & (kinds <= 11)
        chunk = np.repeat(np.arange(len(dt)), [len(d) for d in dt])
        last = np.maximum.accumulate(np.where(whole, np.arange(len(kinds)), -1))
        if np.any(same & ((last < 0) | (chunk[np.maximum(last, 0)] != chunk))):
            raise TraceError(f"{path}: lane {lane} is damaged: a touch_rows repeats one its chunk has not had")
        out["b"][same] = out["b"][last[same]]
        out["index"][same] = out["index"][last[same]]
        out["kind"][same] = kinds[same] - (ROWS_SAME[0] - 9)
    if version == 3:  # a failed attempt was a steal record with b = 0: read as later versions write it
        failed = (kinds == STEAL) & (out["b"] == 0)
        out["b"][failed] = out["a"][failed]  # the victim
        out["a"][failed] = 1  # one attempt
        out["kind"][failed] = STEAL_FAILURES
    short = (kinds >= SHORT_TOUCH[0]) & (kinds <= SHORT_TOUCH[-1])
    if np.any(short):
        out["b"][short] = out["index"][short]
        out["index"][short] = kinds[short] - SHORT_TOUCH[0]
        out["kind"][short] = 4


def _ticks_to_ns(start_ticks: int, start_ns: int, clock: tuple[int, int]):
    """Ticks to ns since the start as the C++ reader converts them: with the last chunk's clock pair, 0 at or
    before the start (tick counts stay below 2^63, so int64 holds their differences)."""
    ticks, ns = clock
    ns_per_tick = float(ns - start_ns) / float(ticks - start_ticks) if ticks > start_ticks else 1.0

    def convert(t: np.ndarray) -> np.ndarray:
        since = t.view(np.int64) - np.int64(start_ticks)
        np.maximum(since, 0, out=since)
        return (since * ns_per_tick).astype(np.uint64)
    return convert
