"""Where each task ran, iteration after iteration.

ADWS deals an iterative program's task tree over the workers the same way every iteration, so a leaf and
the data it touches stay on one core (seed 003 §4.1, §4.2); random work stealing re-deals them every time.
This module measures that from a trace: a task is named by its spawn path under its iteration's root (the
path the observer hook uses), each root of `runtime::run` is one iteration, and a task "moved" when it
began on another worker than the task of the same path in the previous iteration. A leaf that moved to a
worker under another last-level cache (the trace's cache domains) left its data behind; one that moved
inside its domain finds it in the shared cache, which is what ADWS's localized stealing aims at (seed 003
§4.3).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .trace import KIND, RUNTIME_BLOCK, Trace, ancestry_loop

_CODE = {v: k for k, v in KIND.items()}


@dataclass
class Mapping:
    workers: int
    iterations: int
    tasks_per_iteration: float
    leaves_per_iteration: float
    moved_leaves: list[float]  # per iteration after the first: fraction of its leaves that moved
    moved_tasks: list[float]   # the same over every task
    moved_leaves_domain: list[float]  # per iteration after the first: fraction of its leaves in another cache domain
    domains: int                      # cache domains the workers are in
    leaves_per_worker: list[float]  # mean per iteration
    steals_per_iteration: float     # successful steals
    left_out: int = 0  # tasks not mapped: their spawner was not recorded (a stolen task below the depth)

    def mean_moved_leaves(self) -> float:
        return float(np.mean(self.moved_leaves)) if self.moved_leaves else 0.0

    def mean_moved_leaves_domain(self) -> float:
        return float(np.mean(self.moved_leaves_domain)) if self.moved_leaves_domain else 0.0

    def mean_moved_tasks(self) -> float:
        return float(np.mean(self.moved_tasks)) if self.moved_tasks else 0.0


def mapping(trace: Trace) -> Mapping:
    r = trace.records
    begins = r[(r["kind"] == _CODE["task_begin"]) & (r["worker"] != RUNTIME_BLOCK)]
    begins = begins[np.argsort(begins["t_ns"], kind="stable")]
    serial = begins["a"].tolist()
    parent = begins["b"].tolist()
    index = begins["index"].tolist()
    worker = begins["worker"].tolist()

    # Named from the root down (a chain is followed once; no reliance on clocks agreeing across workers).
    parent_of = dict(zip(serial, parent))
    index_of = dict(zip(serial, index))
    # A path is an id: paths are interned as (parent's path id, index) -> id, the root's path () being 0, so
    # equal paths of two iterations get one id and each task costs one lookup. As tuples, each task held its
    # whole path: a chain of 20,000 nested groups took 1.6 GB and 6-13 s (an outside-user campaign).
    path: dict[int, int] = {}
    path_id: dict[tuple[int, int], int] = {}
    iteration_of: dict[int, int] = {}
    roots = 0
    # Roots in the order they began, one per iteration: parent serial 0. A task whose spawner was not recorded
    # (UNRECORDED: a stolen task below the recording depth) is left unnamed, with its subtree.
    for s, p in zip(serial, parent):
        if p == 0:
            path[s] = 0
            iteration_of[s] = roots
            roots += 1
    for s in serial:
        chain = []
        on_chain = set()
        while s not in path and s in parent_of and parent_of[s] != 0:
            if s in on_chain:  # only a damaged file links a task back into its own ancestry
                raise ancestry_loop(s)
            on_chain.add(s)
            chain.append(s)
            s = parent_of[s]
        if s not in path:  # its ancestry began before tracing started: left unnamed
            continue
        for c in reversed(chain):
            path[c] = path_id.setdefault((path[s], index_of[c]), len(path_id) + 1)
            iteration_of[c] = iteration_of[s]
            s = c
    has_children = set(p for p in parent if p)

    per_iteration: list[dict[int, int]] = [dict() for _ in range(roots)]
    leaves_of: list[dict[int, int]] = [dict() for _ in range(roots)]
    for s, w in zip(serial, worker):
        if s not in path:
            continue
        k = iteration_of[s]
        per_iteration[k][path[s]] = w
        if s not in has_children:
            leaves_of[k][path[s]] = w

    domain_of = list(trace.llc_domain) if trace.llc_domain else [0] * max(1, trace.workers)

    def moved(seq: list[dict[int, int]], place=lambda w: w) -> list[float]:
        out = []
        for prev, cur in zip(seq, seq[1:]):
            common = prev.keys() & cur.keys()
            if common:
                out.append(sum(place(prev[q]) != place(cur[q]) for q in common) / len(common))
        return out

    counts = np.zeros(trace.workers)
    for leaves in leaves_of:
        for w in leaves.values():
            counts[w] += 1
    n = max(roots, 1)
    steals = r[(r["kind"] == _CODE["steal"]) & (r["b"] == 1)]
    return Mapping(
        workers=trace.workers,
        iterations=roots,
        tasks_per_iteration=sum(len(x) for x in per_iteration) / n,
        leaves_per_iteration=sum(len(x) for x in leaves_of) / n,
        moved_leaves=moved(leaves_of),
        moved_tasks=moved(per_iteration),
        moved_leaves_domain=moved(leaves_of, lambda w: domain_of[w]),
        domains=len(set(domain_of)),
        leaves_per_worker=(counts / n).tolist(),
        steals_per_iteration=len(steals) / n,
        left_out=sum(1 for s in serial if s not in path),
    )


def describe(m: Mapping) -> list[str]:
    lines = [f"{m.iterations} iterations; per iteration {m.tasks_per_iteration:.1f} tasks, "
             f"{m.leaves_per_iteration:.1f} leaves, {m.steals_per_iteration:.1f} successful steals"]
    if m.moved_leaves:
        lines.append(f"leaves on another worker than in the previous iteration: mean {100 * m.mean_moved_leaves():.1f}% "
                     f"(min {100 * min(m.moved_leaves):.1f}%, max {100 * max(m.moved_leaves):.1f}%); "
                     f"all tasks {100 * m.mean_moved_tasks():.1f}%")
        if m.domains > 1:
            lines.append(f"leaves in another cache domain than in the previous iteration: mean "
                         f"{100 * m.mean_moved_leaves_domain():.1f}% (min {100 * min(m.moved_leaves_domain):.1f}%, "
                         f"max {100 * max(m.moved_leaves_domain):.1f}%)")
    elif m.iterations == 0:
        lines.append("no iteration (runtime::run call) was traced: nothing to map")
    elif m.iterations == 1:
        lines.append("one iteration: nothing to compare it with")
    else:
        # Several iterations, but no two consecutive ones ran a leaf (a task, for the second figure) at the same
        # spawn path: their task trees differ (another program per call, or a shape that changes).
        lines.append(f"no two consecutive iterations of the {m.iterations} share a leaf's spawn path, so no leaf "
                     "can be followed from one to the next: their task trees differ")
    if m.left_out:
        # At depth `all` the spawner of every task the engine names is recorded; what is left out then is a child
        # spawned into a group by another task than its creator (or one begun before the trace did): telling
        # such a trace to be made at `all` sent a user round in a circle (an outside-user campaign).
        lines.append(f"{m.left_out} tasks left out: their spawner was not recorded (a task stolen below the "
                     "recording depth, which ROOST_TRACE_DEPTH=all records; a child spawned into a group by "
                     "another task than its creator, which no depth records; or one begun before the trace did)")
    lines.append("leaves per worker and iteration: " +
                 ", ".join(f"w{w} {c:.1f}" for w, c in enumerate(m.leaves_per_worker)))
    return lines
