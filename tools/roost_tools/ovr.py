"""Non-work overhead and work-time inflation (seed 001 eqs. 1-4) from two traces of the same program: one
at N workers, one at 1.

    T_N = T_1 / N * OVR_N * WTI_N,   OVR_N = T_N * N / Work_N,   WTI_N = Work_N / Work_1,
    Speed-up_N = N / (OVR_N * WTI_N)

Eq. 1 takes the serial run to be all work (T_1 = Work_1); a 1-worker roost run is not (its own runtime and
run() launches), so the serial reference here is Work_1, the speed-up is Work_1 / T_N, and the 1-worker
run's own overhead is reported apart as OVR_1 = T_1 / Work_1.

T is the time inside runtime::run (iteration events), over the iterations kept (`skip` leaves out the first
ones, a program's warm-up). Work is, per worker and iteration, its time from the first task it starts or
resumes in the iteration to its first entry into the scheduling loop after its last task record there,
less its time in the scheduling loop: the engine marks the loop with idle_begin when a worker enters it (it
runs no task from there, whether it finds a job at once, steals, spins or sleeps) and idle_end when it
leaves with a job. So every task's work counts once and in full, wherever its pieces ran (the root's, and
each segment of a task that suspends on one worker and resumes on another), and the search for work while
a task waits at its join does not count; nor does run()'s own launch before the root starts and its return
after the root's end (the caller's thread is worker 0 there, outside the loop: counted as work, a 1-worker
run of 0.48 ms of tasks had 0.82 ms of work). What counts as work beyond seed 001's kernels: the runtime code a task calls itself
(spawn, join), and the short switches between a worker's tasks and its loop.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .krd import accesses
from .trace import Trace

IDLE_BEGIN, IDLE_END, ITERATION_BEGIN, ITERATION_END = 14, 15, 7, 8
TASK_BEGIN, TASK_END, TASK_RESUME = 1, 2, 3


def _merge(intervals):
    out = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def _overlap(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> int:
    """Total length of the intersection of two sorted, disjoint interval lists."""
    total, i, j = 0, 0, 0
    while i < len(a) and j < len(b):
        total += max(0, min(a[i][1], b[j][1]) - max(a[i][0], b[j][0]))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def iterations(t: Trace, skip: int = 0) -> list[tuple[int, int]]:
    """The runtime::run intervals, in order, less the first `skip`."""
    r = t.records
    b = np.sort(r[r["kind"] == ITERATION_BEGIN]["t_ns"].astype(np.int64))
    e = np.sort(r[r["kind"] == ITERATION_END]["t_ns"].astype(np.int64))
    runs = list(zip(b[: len(e)].tolist(), e[: len(b)].tolist()))
    if skip < 0:
        raise ValueError(f"--skip {skip}: must be 0 or more (the iterations to leave out)")
    if not runs and not t.complete:
        # The runtime's own lane (each run's begin and end) is written when the runtime is destroyed: a program
        # killed or ended without destroying it left none, while its roots' task records are there (mapping
        # counts those; an outside-user campaign saw the two disagree without a word).
        raise ValueError("the trace was cut short (no end chunk) before its runtime wrote its iteration records "
                         "(each runtime::run's begin and end, written when the runtime is destroyed): nothing to "
                         "measure; let the program destroy its runtime")
    if not runs:
        raise ValueError("the trace has no iteration (runtime::run call): nothing to measure")
    if skip >= len(runs):
        raise ValueError(f"--skip {skip}: the trace has {len(runs)} iteration(s); leave out at most {len(runs) - 1}")
    return runs[skip:]


def run_time(t: Trace, skip: int = 0) -> int:
    return sum(e - s for s, e in iterations(t, skip))


def idle_intervals(t: Trace, worker: int) -> list[tuple[int, int]]:
    """A worker's time in its scheduling loop; one still open at the trace's end lasts to its end."""
    r = t.records
    mine = r[(r["worker"] == worker) & ((r["kind"] == IDLE_BEGIN) | (r["kind"] == IDLE_END))]
    out, since = [], None
    for k, ts in zip(mine["kind"].tolist(), mine["t_ns"].astype(np.int64).tolist()):
        if k == IDLE_BEGIN and since is None:
            since = ts
        elif k == IDLE_END and since is not None:
            out.append((since, ts))
            since = None
    if since is not None:
        out.append((since, int(r["t_ns"].max())))
    return _merge(out)


def task_intervals(t: Trace, worker: int, runs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Per iteration (sorted, disjoint `runs`), where the worker's work lies: from its first task start or
    resumption there to its first entry into its scheduling loop after its last task record there (or the
    iteration's end, without one); none where it ran no task. Not to its last record: a task whose last
    recorded event is a nested child's end (or no event at all below the recording depth) goes on working
    after it, and one that suspends has its end on another worker."""
    r = t.records
    mine = r[r["worker"] == worker]
    starts = np.sort(mine[np.isin(mine["kind"], (TASK_BEGIN, TASK_RESUME))]["t_ns"].astype(np.int64))
    ends = np.sort(mine[mine["kind"] == TASK_END]["t_ns"].astype(np.int64))
    loop = np.sort(mine[mine["kind"] == IDLE_BEGIN]["t_ns"].astype(np.int64))
    out = []
    for s, e in runs:
        # Iterations may touch (virtual time: one run's end is the next one's begin): a start at the instant
        # an iteration ends is the next one's, an end at the instant it begins the previous one's (--skip 1
        # took the first iteration's root end as the second's first task record: an outside-user campaign).
        lo, hi = np.searchsorted(starts, s, "left"), np.searchsorted(starts, e, "left")
        if lo >= hi:  # no task starts inside (an iteration of a damaged file may end before it starts)
            continue
        first = int(starts[lo])
        last = int(starts[hi - 1])
        k_end = np.searchsorted(ends, e, "right")
        if k_end > 0 and int(ends[k_end - 1]) > first:
            last = max(last, int(ends[k_end - 1]))
        k = np.searchsorted(loop, last, "left")
        out.append((first, min(int(loop[k]), e) if k < len(loop) else e))
    return out


def work_time(t: Trace, skip: int = 0) -> int:
    # Each iteration apart, not merged where they touch: merged, the launch of the next run() and a worker's
    # way from its loop to its first task of the next iteration counted as work (an outside-user campaign).
    runs = iterations(t, skip)
    total = 0
    for w in range(t.workers):
        busy = task_intervals(t, w, runs)
        total += sum(e - s for s, e in busy) - _overlap(busy, idle_intervals(t, w))
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


def decompose(trace_n: Trace, trace_1: Trace, skip: int = 0,
              names: tuple[str, str] = ("the trace", "the reference")) -> Decomposition:
    """`skip`: iterations to leave out at the start of both traces (warm-up). `names`: how errors name the two
    traces (roost-analyze gives their files: an error about one of two files said "the trace" of either)."""
    name_n, name_1 = names
    if trace_1.workers != 1:
        raise ValueError(f"{name_1} must come from 1 worker, not {trace_1.workers}")
    if trace_n.simulated != trace_1.simulated:  # virtual time against real time means nothing
        which = (name_n, name_1) if trace_n.simulated else (name_1, name_n)
        raise ValueError(f"{which[0]} is of a simulated run (virtual time) and {which[1]} of a native one: "
                         f"trace both on the same platform (ROOST_PLATFORM)")
    if trace_n.simulated and trace_n.topology != trace_1.topology:  # another machine's virtual time
        raise ValueError(f"{name_n} simulated '{trace_n.topology}' and {name_1} '{trace_1.topology}': the "
                         f"reference must run on the same simulated machine (ROOST_TOPOLOGY), with 1 worker")
    counts = []
    for t, name in ((trace_n, name_n), (trace_1, name_1)):
        try:
            counts.append(len(iterations(t)))
        except ValueError as e:
            raise ValueError(f"{name}: {e}") from None
    n, n_1 = counts
    if n != n_1:  # the same program runs the same iterations, whatever its worker count
        raise ValueError(f"{name_n} and {name_1} hold {n} and {n_1} iterations (runtime::run calls): the reference "
                         f"must be the same program, with the same input, traced with 1 worker")
    # Equal iteration counts let a trace of another program through: fib against heat2d gave a WTI_N of 11.6
    # (an outside-user campaign). Whether a program declares data with roost::touch does not depend on its
    # worker count (touches are recorded at every trace depth), so one trace with touches and one without
    # are two programs. How many bytes does depend on it (a loop's pieces, and their halos, follow the
    # workers), so the amounts are not compared.
    touched = [int(accesses(t)["bytes"].sum()) for t in (trace_n, trace_1)]
    if (touched[0] > 0) != (touched[1] > 0):
        has, lacks = (name_n, name_1) if touched[0] else (name_1, name_n)
        raise ValueError(f"{has} touches {max(touched)} bytes in all (roost::touch) and {lacks} none: the "
                         f"reference must be the same program, with the same input, traced with 1 worker")
    d = Decomposition(trace_n.workers, run_time(trace_n, skip), run_time(trace_1, skip),
                      work_time(trace_n, skip), work_time(trace_1, skip))
    for work, which in ((d.work_n, name_n), (d.work_1, name_1)):
        if work <= 0:  # OVR and WTI divide by it
            raise ValueError(f"{which}'s iterations hold no work (no time inside a task): OVR_N and WTI_N are "
                             f"undefined; trace a program whose tasks take time (a simulated run whose every "
                             f"cost is 0 ns has none)")
    return d
