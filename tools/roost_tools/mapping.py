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


def _intern(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Dense ids (int64) of the pairs (x[i], y[i]) of non-negative integers: equal pairs, equal ids."""
    if not len(x):
        return np.zeros(0, np.int64)
    x = x.astype(np.int64, copy=False)
    y = y.astype(np.int64, copy=False)
    span = int(y.max()) + 1
    if int(x.max()) < (2**62) // span:
        return np.unique(x * span + y, return_inverse=True)[1].reshape(-1).astype(np.int64, copy=False)
    order = np.lexsort((y, x))
    xs, ys = x[order], y[order]
    new = np.ones(len(x), bool)
    new[1:] = (xs[1:] != xs[:-1]) | (ys[1:] != ys[:-1])
    out = np.empty(len(x), np.int64)
    out[order] = np.cumsum(new) - 1
    return out


def _last_per_key(key: np.ndarray, value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct keys, ascending, each with the value of its last occurrence (a dict's `d[key] = value`
    over the rows in order)."""
    order = np.argsort(key, kind="stable")
    k = key[order]
    last = np.ones(len(k), bool)
    last[:-1] = k[1:] != k[:-1]
    return k[last], value[order[last]]


def _by_levels(depth: int, tasks: int) -> bool:
    """Whether _path_ids names paths a depth at a time (one sort of each level's tasks: the fastest for the
    shallow trees of most runs) or by doubling (a sort of every task per bit of the depth: a chain of 20,000
    nested groups takes 15 of those, not 20,000 steps)."""
    return depth <= 64 or depth * 1000 <= tasks


def _path_ids(up: np.ndarray, index: np.ndarray, depth: np.ndarray) -> np.ndarray:
    """Ids of the tasks' paths (equal paths, equal ids), given each task's parent (a root its own), its index
    under it (+ 1; 0 for a root) and its depth (0 for a root)."""
    m = len(up)
    top = int(depth.max()) if m else 0
    if _by_levels(top, m):
        order = np.argsort(depth.astype(np.uint16) if top < 2**16 else depth, kind="stable")
        bounds = np.searchsorted(depth[order], np.arange(top + 2))
        path = np.zeros(m, np.int64)  # the roots' (), 0
        ids = 1
        for level in range(1, top + 1):
            tasks = order[bounds[level]:bounds[level + 1]]
            here = _intern(path[up[tasks]], index[tasks])
            path[tasks] = here + ids
            ids += int(here.max()) + 1 if len(here) else 0
        return path
    # By doubling: the ids of each task's 2^k indices upward (0 above its root), paired a level at a time, and
    # each task's path put together from the blocks its depth's bits name (equal depths and blocks: equal paths).
    anc, block = up, index
    acc = np.zeros(m, np.int64)
    ptr = np.arange(m, dtype=np.int64)
    k = 0
    while (1 << k) <= top:
        take = ((depth >> k) & 1).astype(bool)
        if np.any(take):
            p = ptr[take]
            acc[take] = _intern(acc[take], block[p])
            ptr[take] = anc[p]
        if (1 << (k + 1)) <= top:
            block = _intern(block, block[anc])
            anc = anc[anc]
        k += 1
    return _intern(depth, acc)


def mapping(trace: Trace) -> Mapping:
    r = trace.records
    rows = np.flatnonzero((r["kind"] == _CODE["task_begin"]) & (r["worker"] != RUNTIME_BLOCK))
    rows = rows[np.argsort(r["t_ns"][rows], kind="stable")]  # the begins in the order they began
    serial = r["a"][rows]
    parent = r["b"][rows]
    index = r["index"][rows]
    worker = r["worker"][rows]
    del rows
    nr = len(serial)

    # Column by column (numpy), not a dict and a tuple per task: those took 12 GB for a 690 MB trace (a chain
    # of 20,000 nested groups, once 1.6 GB and 6-13 s with each task's path a tuple, is named in a few steps).
    # Tasks: one per serial, with the parent and index of its last begin (a dict of them keeps the last).
    by = np.argsort(serial, kind="stable")
    first = np.ones(nr, bool)
    first[1:] = serial[by][1:] != serial[by][:-1]
    last = np.ones(nr, bool)
    last[:-1] = first[1:]
    node_of_row = np.empty(nr, np.int64)
    node_of_row[by] = np.cumsum(first) - 1
    ser = serial[by[first]]
    par_ser = parent[by[last]]
    idx = index[by[last]]
    del by, first, last
    n = len(ser)

    # Roots in the order they began, one per iteration: parent serial 0. A task whose spawner was not recorded
    # (UNRECORDED: a stolen task below the recording depth) is left unnamed, with its subtree: its ancestry
    # (followed from the root down, once; no reliance on clocks agreeing across workers) reaches no root.
    root_row = parent == 0
    roots = int(np.count_nonzero(root_row))
    is_root = np.zeros(n, bool)
    is_root[node_of_row[root_row]] = True
    iteration_of = np.full(n, -1, np.int64)
    np.maximum.at(iteration_of, node_of_row[root_row], np.arange(roots, dtype=np.int64))  # a serial's last
    del root_row
    up = np.searchsorted(ser, par_ser) if n else np.zeros(0, np.int64)
    found = up < n
    found[found] = ser[up[found]] == par_ser[found]
    end = is_root | ~found  # a root, or a task whose spawner began before tracing started (or unrecorded)
    # Pointer jumping: each task's end of ancestry and its distance (its depth under its root).
    here = np.arange(n, dtype=np.int64)
    parent_node = np.where(end, here, up)
    del up, found
    jump = parent_node.copy()
    depth = (~end).astype(np.int64)
    for _ in range(n.bit_length() + 1):
        nxt = jump[jump]
        if np.array_equal(nxt, jump):
            break
        depth += depth[jump]
        jump = nxt
    looped = ~end[jump]
    if np.any(looped):
        # Only a damaged file links a task back into its own ancestry: the error names where the walk from the
        # first such task (in begin order) came back onto itself.
        _raise_loop(int(serial[np.argmax(looped[node_of_row])]), ser, par_ser, is_root)
    named = is_root[jump]

    # A path is an id: equal paths (the indices from the root's child down) of two iterations get one.
    nm = np.flatnonzero(named)
    dense = np.full(n, -1, np.int64)
    dense[nm] = np.arange(len(nm), dtype=np.int64)
    path = np.full(n, -1, np.int64)
    path[nm] = _path_ids(dense[parent_node[nm]], np.where(is_root[nm], 0, idx[nm].astype(np.int64) + 1), depth[nm])
    del parent_node, dense, nm

    parents_seen = parent[parent != 0]
    has_children = np.zeros(n, bool)
    if n and len(parents_seen):
        at = np.searchsorted(ser, parents_seen)
        ok = at < n
        ok[ok] = ser[at[ok]] == parents_seen[ok]
        has_children[at[ok]] = True
    del parents_seen

    # Per iteration: each path's worker, the last task of the path to begin there winning (as `d[path] = w`).
    named_row = named[node_of_row]
    left_out = int(nr - np.count_nonzero(named_row))
    node = node_of_row[named_row]
    paths = max(1, int(path.max()) + 1) if n else 1
    key = iteration_of[jump[node]] * paths + path[node]
    w = worker[named_row]
    leaf = ~has_children[node]
    task_keys, task_workers = _last_per_key(key, w)
    leaf_keys, leaf_workers = _last_per_key(key[leaf], w[leaf])
    del node, key, w, leaf, named_row

    domain_of = list(trace.llc_domain) if trace.llc_domain else [0] * max(1, trace.workers)

    def moved(keys: np.ndarray, workers: np.ndarray, place=None) -> list[float]:
        # For each iteration and the next, the paths in both: the share whose worker (or its place) differs.
        nxt = np.searchsorted(keys, keys + paths)
        common = nxt < len(keys)
        common[common] = keys[nxt[common]] == keys[common] + paths
        before, after = workers[common], workers[nxt[common]]
        if place is not None:
            before, after = place[before], place[after]
        it = keys[common] // paths
        n_common = np.bincount(it, minlength=roots).tolist()
        n_moved = np.bincount(it[before != after], minlength=roots).tolist()
        return [b / a for a, b in zip(n_common, n_moved) if a]

    if len(leaf_workers) and int(leaf_workers.max()) >= trace.workers:
        w = int(leaf_workers[leaf_workers >= trace.workers][0])
        raise IndexError(f"index {w} is out of bounds for axis 0 with size {trace.workers}")
    counts = np.bincount(leaf_workers, minlength=trace.workers).astype(float)
    n = max(roots, 1)
    steals = r[(r["kind"] == _CODE["steal"]) & (r["b"] == 1)]
    return Mapping(
        workers=trace.workers,
        iterations=roots,
        tasks_per_iteration=len(task_keys) / n,
        leaves_per_iteration=len(leaf_keys) / n,
        moved_leaves=moved(leaf_keys, leaf_workers),
        moved_tasks=moved(task_keys, task_workers),
        moved_leaves_domain=moved(leaf_keys, leaf_workers, np.asarray(domain_of)),
        domains=len(set(domain_of)),
        leaves_per_worker=(counts / n).tolist(),
        steals_per_iteration=len(steals) / n,
        left_out=left_out,
    )


def _raise_loop(s: int, ser: np.ndarray, par_ser: np.ndarray, is_root: np.ndarray) -> None:
    """The walk up from task `s`, whose ancestry loops: ancestry_loop of the first task it meets twice."""
    on_chain = set()
    while True:
        i = int(np.searchsorted(ser, s))
        if i >= len(ser) or int(ser[i]) != s or is_root[i] or int(par_ser[i]) == 0:
            raise AssertionError(f"task serial {s}: its ancestry ends, it does not loop")
        if s in on_chain:
            raise ancestry_loop(s)
        on_chain.add(s)
        s = int(par_ser[i])


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
