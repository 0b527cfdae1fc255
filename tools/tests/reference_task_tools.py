"""The implementations of mapping.mapping and timeline.task_memory before they were rewritten on numpy columns
(per-task dicts and tuples: 12 GB for a 690 MB trace, 0.74 GB for a 26 MB one), verbatim: the oracle that
test_task_tools_match_reference compares the new ones with, exactly."""
from __future__ import annotations

import numpy as np

from roost_tools.mapping import _CODE, Mapping
from roost_tools.trace import RUNTIME_BLOCK, UNRECORDED, Trace, ancestry_loop


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


def task_memory(trace: Trace, roots: bool = False):
    """timeline.task_memory as it was before its columns (its docstring says what it gives), kept as the oracle."""
    r = trace.records
    begins = r[r["kind"] == 1]
    parent = dict(zip(begins["a"].tolist(), begins["b"].tolist()))
    index = dict(zip(begins["a"].tolist(), begins["index"].tolist()))

    below_root: dict[int, int] = {}  # serial -> the root's child it descends from; never a root's own

    def subtree(serial: int) -> int:  # the root's child this task descends from
        # Walks up to a task whose answer is known (or to the root), then gives every task on the way the
        # answer: once per task, not once per piece and level (a trace of 10^6 tasks took minutes: an
        # outside-user campaign). A root's own answer (-1) is not kept: its children's differ from it.
        chain = [serial]
        on_chain = {serial}
        while True:
            cur = chain[-1]
            if cur in below_root:
                answer = below_root[cur]
                break
            up = parent.get(cur, 0)
            if up in (0, UNRECORDED):  # cur is the top: its child on the chain heads the subtree
                answer = index[chain[-2]] if len(chain) >= 2 else -1
                chain.pop()
                break
            if up in on_chain:  # a damaged file: the walk up would never end
                raise ancestry_loop(up)
            on_chain.add(up)
            chain.append(up)
        for x in chain:
            below_root[x] = answer
        return answer

    start = {}
    memory = {}  # key -> [lines, ns, remote]
    # worker -> keys begun or resumed, not ended, the running one last: an ordered dict, not a list, whose `in`
    # and remove took a chain of 20,000 nested groups 24-40 s (an outside-user campaign).
    running: dict[int, dict] = {}
    spans, root_spans = [], []

    def close(key, at: int) -> None:
        lines, ns, remote = memory.pop(key)
        span = (key[0], start.pop(key), at, subtree(key[1]), lines, ns, remote)
        if parent.get(key[1], 0) != 0:
            spans.append(span)
        elif roots:
            root_spans.append(span)

    last_ns: dict[int, int] = {}
    sel = r[np.isin(r["kind"], [1, 2, 3, 5, 14, 16])]
    # Columns as Python lists: reading a structured array's fields record by record was most of the time.
    for w, kind, t, a, b, ix in zip(sel["worker"].tolist(), sel["kind"].tolist(), sel["t_ns"].tolist(),
                                    sel["a"].tolist(), sel["b"].tolist(), sel["index"].tolist()):
        last_ns[w] = t
        stack = running.setdefault(w, {})
        if kind == 16:
            top = next(reversed(stack), None)
            if top is not None and top in memory:
                m = memory[top]
                m[0] += a
                m[1] += b
                m[2] += ix
            continue
        if kind in (5, 14):  # sleep or look for work: whatever ran on w had ended or suspended
            for key in stack:
                close(key, t)
            stack.clear()
            continue
        key = (w, a)
        if kind in (1, 3):
            stack.pop(key, None)
            stack[key] = None  # last: the running one
            if key not in start:  # a piece on this worker starts here
                start[key] = t
                memory[key] = [0, 0, 0]
        else:
            stack.pop(key, None)
            if key in start:
                close(key, t)
    # Pieces left open (a trace cut short, a worker that ended without going idle): to their worker's last
    # record, as the runtime's timeline does.
    if len(r):
        for w, t in zip(r["worker"].tolist(), r["t_ns"].tolist()):
            last_ns[w] = max(last_ns.get(w, t), t)
    for key in list(start):
        close(key, max(start[key], last_ns.get(key[0], start[key])))
    return root_spans + spans
