"""Reading roost-bench's JSON lines."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path


class ResultsError(ValueError):
    """A results file that cannot be read: the message names the file and the line."""


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
    # Which of `roost-bench --rounds N` interleaved rounds it belongs to (1..N); 0: a run of one round.
    round: int = 0

    @property
    def ran(self) -> bool:
        return bool(self.seconds)


REQUIRED = ("bench", "variant", "size", "workers", "seconds", "median", "check")


def load(path: str | Path) -> list[Measurement]:
    path = Path(path)
    if not path.exists():
        raise ResultsError(f"{path}: no such file (run roost-bench with --json {path} first)")
    out: list[Measurement] = []
    for lineno, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as e:
            raise ResultsError(f"{path}:{lineno}: not a JSON line ({e.msg})") from None
        missing = [k for k in REQUIRED if k not in rec]
        if missing:
            raise ResultsError(f"{path}:{lineno}: missing field(s) {', '.join(missing)}")
        out.append(
            Measurement(
                bench=str(rec["bench"]),
                variant=str(rec["variant"]),
                size=str(rec["size"]),
                workers=int(rec["workers"]),
                seconds=[float(s) for s in rec["seconds"]],
                median=float(rec["median"]),
                check=bool(rec["check"]),
                note=str(rec.get("note", "")),
                c2c_ns=float(rec["c2c_ns"]) if "c2c_ns" in rec else None,
                round=int(rec.get("round", 0)),
            )
        )
    if not out:
        raise ResultsError(f"{path}: no measurements")
    return out
