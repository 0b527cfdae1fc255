"""Non-work overhead and work-time inflation (seed 001 eqs. 1-4) from two traces of the same program: one
at N workers, one at 1.

    T_N = T_1 / N * OVR_N * WTI_N,   OVR_N = T_N * N / Work_N,   WTI_N = Work_N / Work_1,
    Speed-up_N = N / (OVR_N * WTI_N)

Eq. 1 takes the serial run to be all work (T_1 = Work_1); a 1-worker roost run is not (its own runtime and
run() launches), so the serial reference here is Work_1, the speed-up is Work_1 / T_N, and the 1-worker
run's own overhead is reported apart as OVR_1 = T_1 / Work_1.

T is the time inside runtime::run (iteration events). Work is, per worker, the time covered by task spans
(begin to end) less the worker's sleep, summed over workers. Approximation: a task suspended at a join
keeps its span open while its worker looks for work without sleeping, so a little search time counts as
work; runtime code inside tasks (spawn, join) counts as work too, where seed 001 times kernels alone.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .trace import Trace


def _union_length(intervals: list[tuple[int, int]]) -> int:
    total, cur_s, cur_e = 0, None, None
    for s, e in sorted(intervals):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += cur_e - cur_s
    return total


def _intersect_length(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> int:
    total = 0
    for s1, e1 in a:
        for s2, e2 in b:
            total += max(0, min(e1, e2) - max(s1, s2))
    return total


def _merge(intervals):
    out = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def run_time(t: Trace) -> int:
    r = t.records
    b = np.sort(r[r["kind"] == 7]["t_ns"].astype(np.int64))
    e = np.sort(r[r["kind"] == 8]["t_ns"].astype(np.int64))
    return int(np.sum(e[: len(b)] - b[: len(e)]))


def work_time(t: Trace) -> int:
    r = t.records
    total = 0
    for w in range(t.workers):
        mine = r[r["worker"] == w]
        spans, sleeps, open_, asleep = [], [], {}, None
        for rec in mine:
            k = int(rec["kind"])
            if k in (1, 3):
                open_.setdefault(int(rec["a"]), int(rec["t_ns"]))
            elif k == 2 and int(rec["a"]) in open_:
                spans.append((open_.pop(int(rec["a"])), int(rec["t_ns"])))
            elif k == 5:
                asleep = int(rec["t_ns"])
            elif k == 6 and asleep is not None:
                sleeps.append((asleep, int(rec["t_ns"])))
                asleep = None
        merged = _merge(spans)
        total += _union_length(merged) - _intersect_length(merged, _merge(sleeps))
    return total


@dataclass
class Decomposition:
    workers: int
    t_n: int
    t_1: int
    work_n: int
    work_1: int

    @property
    def ovr(self) -> float:
        return self.t_n * self.workers / self.work_n

    @property
    def wti(self) -> float:
        return self.work_n / self.work_1

    @property
    def speedup(self) -> float:  # against the serial work (eq. 4 holds exactly)
        return self.work_1 / self.t_n

    @property
    def ovr_1(self) -> float:  # the 1-worker run's own overhead
        return self.t_1 / self.work_1


def decompose(trace_n: Trace, trace_1: Trace) -> Decomposition:
    if trace_1.workers != 1:
        raise ValueError(f"the reference trace must come from 1 worker, not {trace_1.workers}")
    return Decomposition(trace_n.workers, run_time(trace_n), run_time(trace_1), work_time(trace_n), work_time(trace_1))
