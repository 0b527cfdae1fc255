"""Reading roost-bench's JSON lines."""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from .inputs import read_input


class ResultsError(ValueError):
    """A results file that cannot be read: the message names the file and the line."""


# How the driver's note on a measurement of the simulated platform starts (bench/driver/main.cpp).
VIRTUAL_TIME_NOTE = "virtual time"


@dataclass
class Measurement:
    bench: str
    variant: str
    size: str
    workers: int
    seconds: list[float] = field(default_factory=list)
    median: float = 0.0
    check: bool = False
    note: str = ""
    # Core-to-core round trip of a cache line around the measurement, in ns (None: not measured): timings
    # taken while it was far above its usual value are not comparable (bench/common/machine_state.hpp).
    c2c_ns: float | None = None
    # The run's best round trip up to this measurement, its opening one included (which no line carries as
    # c2c_ns): what the driver compared c2c_ns with. None in results written before it was recorded.
    c2c_best_ns: float | None = None
    # Which of `roost-bench --rounds N` interleaved rounds it belongs to (1..N); 0: a run of one round.
    round: int = 0
    # `roost-bench --platform sim` (driver/main.cpp): the simulated L2 and L3 misses and the lines fetched
    # from another NUMA node's DRAM, of the median repetition (None: not simulated, or the topology has no such
    # cache); its seconds are then the simulated machine's virtual time, not this host's.
    l2_misses: int | None = None
    l3_misses: int | None = None
    remote_dram: int | None = None
    topology: str = ""  # simulated: the machine (roost-bench --topology); "" natively or in older files
    # Simulated: the seed (ROOST_SIM_SEED) and parameters (ROOST_SIM_PARAMS) it ran with; None in older files.
    sim_seed: int | None = None
    sim_params: str | None = None
    hint_error: str = ""  # roost-bench --hint-error (det:ALPHA or rand:ALPHA): hints wrong on purpose
    # Which invocation of roost-bench wrote the line ("" in files written before lines carried it): runs appended
    # to one file are told apart by it.
    run: str = ""

    @property
    def ran(self) -> bool:
        return bool(self.seconds)

    @property
    def simulated(self) -> bool:
        """A measurement on the simulated platform: the driver's note says virtual time (and it gives the misses
        of every cache the topology has)."""
        return self.note.startswith(VIRTUAL_TIME_NOTE) or any(
            x is not None for x in (self.l2_misses, self.l3_misses, self.remote_dram))


@dataclass
class Summary:
    """One row of the summary `roost-bench --rounds N` writes after a benchmark's rounds (driver/rounds.hpp:
    the rule that leaves far rounds out and takes ratios inside each round lives there only)."""
    bench: str
    size: str
    variant: str
    workers: int
    median: float | None  # s, median over the rounds used; None: it ran in none of them
    spread: float | None
    vs_serial: float | None
    vs_ws: float | None
    rounds_used: int
    rounds: int
    near_rounds: int  # 0: every round was far, all were used
    check: bool
    note: str = ""
    run: str = ""


@dataclass
class LeftOut:
    """A variant that cannot run for a benchmark (no such version of it, a scheduler not implemented, a peer on
    the simulated platform): roost-bench writes no measurement for it, only this line, so that a report can
    name it once below the table instead of listing a row that cannot exist."""
    bench: str
    size: str
    variant: str
    note: str
    run: str = ""


# Notes of the rows that files written before "left_out" lines existed carry for such variants.
CANNOT_RUN_NOTES = ("no such version", "scheduler not implemented yet", "not simulated")


def cannot_run(note: str) -> bool:
    return note.startswith(CANNOT_RUN_NOTES)


REQUIRED = ("bench", "variant", "size", "workers", "seconds", "median", "check")
SUMMARY_REQUIRED = ("bench", "size", "variant", "workers", "median", "spread", "vs_serial", "vs_ws", "rounds_used",
                    "rounds", "near_rounds", "check")


def _time(rec: dict, key: str, where: str) -> float:
    """A time or ratio of the line: a finite number, not negative (json reads NaN and Infinity too)."""
    x = rec[key]
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) or x < 0:
        raise ResultsError(f"{where}: field '{key}' is {json.dumps(x)}; roost-bench writes a finite number, "
                           f"0 or more")
    return float(x)


def _opt(rec: dict, key: str, where: str) -> float | None:
    return None if rec[key] is None else _time(rec, key, where)


def _whole(rec: dict, key: str, where: str, least: int = 0) -> int:
    """A count of the line (workers, rounds, misses): a whole number, `least` or more."""
    x = rec[key]
    if isinstance(x, bool) or not isinstance(x, int) or x < least:
        raise ResultsError(f"{where}: field '{key}' is {json.dumps(x)}; roost-bench writes a whole number, "
                           f"{least} or more")
    return x


def _flag(rec: dict, key: str, where: str) -> bool:
    x = rec[key]
    if not isinstance(x, bool):  # bool("false") is True: a string would pass every check
        raise ResultsError(f"{where}: field '{key}' is {json.dumps(x)}; roost-bench writes true or false")
    return x


def cut_short(line: str) -> bool:
    """A line roost-bench began and a failed write (a full disk, a file size limit) ended part-way: its lines
    begin with the run's id and end with the object's brace, and one cut short has the first and not the
    second. roost-bench starts its next run's lines on a line of their own after one."""
    text = line.strip()
    return text.startswith('{"run":"') and not text.endswith("}")


def load_all(path: str | Path, skipped: list[str] | None = None) -> list[Measurement | Summary | LeftOut]:
    """Every line of a roost-bench --json file, in file order: measurements, summary rows, left-out variants.
    `skipped`: where given, a line cut short (cut_short) is left out and named there instead of refused."""
    path = Path(path)
    if not path.exists():
        raise ResultsError(f"{path}: no such file (run roost-bench with --json {path} first)")
    raw = read_input(path, ResultsError, "; give the JSON lines file that roost-bench --json wrote")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ResultsError(f"{path}: not JSON lines (not UTF-8 text at byte {e.start}); give the file that "
                           f"roost-bench --json wrote") from None
    out: list[Measurement | Summary | LeftOut] = []
    cut: list[int] = []  # the lines cut short, left out
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as e:
            if skipped is not None and cut_short(line):
                cut.append(lineno)
                skipped.append(f"{path}:{lineno}: a line cut short (a write of roost-bench that failed part-way), "
                               f"left out")
                continue
            raise ResultsError(f"{path}:{lineno}: not a JSON line ({e.msg})") from None
        if not isinstance(rec, dict):
            raise ResultsError(f"{path}:{lineno}: not a JSON object (roost-bench writes one per line)")
        try:
            out.append(_record(rec, f"{path}:{lineno}"))
        except (TypeError, ValueError) as e:
            if isinstance(e, ResultsError):
                raise
            raise ResultsError(f"{path}:{lineno}: a field of the wrong type ({e})") from None
    # Something measured, or a failure to show (a variant that threw keeps its row). A file whose every variant
    # was left out is no result, as roost-bench's run that wrote it was (exit status 2): it was an empty report
    # with exit status 0 (an outside-user campaign); and the reason is said, as is a line cut short.
    if not any(isinstance(r, Measurement) and (r.ran or not cannot_run(r.note)) for r in out):
        why = [f"{r.bench} {r.size} {r.variant}: {r.note}" for r in out
               if isinstance(r, (LeftOut, Measurement))]
        why += [f"line {n} cut short by a write of roost-bench that failed part-way" for n in cut]
        raise ResultsError(f"{path}: no measurements" + (f" ({'; '.join(why)})" if why else ""))
    return out


def _count(rec: dict, key: str, where: str) -> int | None:
    return _whole(rec, key, where) if rec.get(key) is not None else None


def _record(rec: dict, where: str) -> Measurement | Summary | LeftOut:
    """One line of the file (`where` names it: file:line)."""
    if rec.get("left_out"):
        missing = [k for k in ("bench", "size", "variant", "note") if k not in rec]
        if missing:
            raise ResultsError(f"{where}: left_out line missing field(s) {', '.join(missing)}")
        return LeftOut(bench=str(rec["bench"]), size=str(rec["size"]), variant=str(rec["variant"]),
                       note=str(rec["note"]), run=str(rec.get("run", "")))
    if rec.get("summary"):
        missing = [k for k in SUMMARY_REQUIRED if k not in rec]
        if missing:
            raise ResultsError(f"{where}: summary line missing field(s) {', '.join(missing)}")
        return Summary(bench=str(rec["bench"]), size=str(rec["size"]), variant=str(rec["variant"]),
                       workers=_whole(rec, "workers", where, 1), median=_opt(rec, "median", where),
                       spread=_opt(rec, "spread", where), vs_serial=_opt(rec, "vs_serial", where),
                       vs_ws=_opt(rec, "vs_ws", where), rounds_used=_whole(rec, "rounds_used", where),
                       rounds=_whole(rec, "rounds", where), near_rounds=_whole(rec, "near_rounds", where),
                       check=_flag(rec, "check", where), note=str(rec.get("note", "")),
                       run=str(rec.get("run", "")))
    missing = [k for k in REQUIRED if k not in rec]
    if missing:
        raise ResultsError(f"{where}: missing field(s) {', '.join(missing)}")
    _names(rec, where)
    seconds = _seconds(rec, where)
    median = _time(rec, "median", where)  # checked first: a median that is no number is named as such
    # No times: a variant that did not run (roost-bench writes its note and median 0). A median beside none is
    # no line roost-bench writes, and the report showed it as a row of dashes.
    if not seconds and median != 0:
        raise ResultsError(f"{where}: field 'seconds' is [] beside median {json.dumps(rec['median'])}; roost-bench "
                           f"writes the times of every run it measured, and median 0 for one it did not")
    return Measurement(
        bench=str(rec["bench"]),
        variant=str(rec["variant"]),
        size=str(rec["size"]),
        workers=_whole(rec, "workers", where, 1),
        seconds=seconds,
        median=median,
        check=_flag(rec, "check", where),
        note=str(rec.get("note", "")),
        c2c_ns=_time(rec, "c2c_ns", where) if "c2c_ns" in rec else None,
        c2c_best_ns=_time(rec, "c2c_best_ns", where) if "c2c_best_ns" in rec else None,
        round=_whole(rec, "round", where) if "round" in rec else 0,
        l2_misses=_count(rec, "l2_misses", where),
        l3_misses=_count(rec, "l3_misses", where),
        remote_dram=_count(rec, "remote_dram", where),
        topology=str(rec.get("topology", "")),
        sim_seed=_whole(rec, "sim_seed", where) if "sim_seed" in rec else None,
        sim_params=str(rec["sim_params"]) if "sim_params" in rec else None,
        hint_error=str(rec.get("hint_error", "")),
        run=str(rec.get("run", "")),
    )


def _names(rec: dict, where: str) -> None:
    """bench, variant and size are strings, as roost-bench writes them (a number was taken as a name)."""
    for key in ("bench", "variant", "size"):
        if not isinstance(rec[key], str) or not rec[key]:
            raise ResultsError(f"{where}: field '{key}' is {json.dumps(rec[key])}; roost-bench writes a non-empty string")


def _seconds(rec: dict, where: str) -> list[float]:
    times = rec["seconds"]
    if not isinstance(times, list):
        raise ResultsError(f"{where}: field 'seconds' is {json.dumps(times)}; roost-bench writes a list of times")
    return [_time({"seconds": t}, "seconds", where) for t in times]


def load(path: str | Path) -> list[Measurement]:
    """The measurement lines of a roost-bench --json file (summary lines left out)."""
    return [r for r in load_all(path) if isinstance(r, Measurement)]
