"""mapping.mapping and timeline.task_memory (numpy columns) against their earlier implementations (per-task dicts
and tuples, kept verbatim in reference_task_tools.py) on random traces: every result exactly equal, in the same
order, and the same errors."""
import random
import struct

import numpy as np
import pytest

import reference_task_tools as reference
from roost_tools import mapping, timeline
from roost_tools.trace import RECORD, UNRECORDED, Trace, TraceError, read
from test_trace_tools import _chunk

RT = 0xFFFF  # the runtime's lane


def _same(new_call, old_call):
    """Both results, or both errors (type and message)."""
    try:
        old = old_call()
    except Exception as e:  # noqa: BLE001 - whatever the reference raised, the new one must raise
        with pytest.raises(type(e)) as new_error:
            new_call()
        assert str(new_error.value) == str(e)
        return None, e
    return new_call(), old


def _check(t: Trace) -> str:
    """Compares old and new on `t`; says which error both raised, if any."""
    outcome = []
    chosen = mapping._by_levels
    try:
        # Paths named both ways: a depth at a time (shallow trees) and by doubling (deep ones).
        for by_levels in (chosen, lambda depth, tasks: True, lambda depth, tasks: False):
            mapping._by_levels = by_levels
            new, old = _same(lambda: mapping.mapping(t), lambda: reference.mapping(t))
            if new is not None:
                assert new == old
    finally:
        mapping._by_levels = chosen
    if new is None:
        outcome.append(f"mapping: {type(old).__name__}")
    for roots in (False, True):
        new, old = _same(lambda: timeline.task_memory(t, roots=roots), lambda: reference.task_memory(t, roots=roots))
        if new is None:
            outcome.append(f"task_memory: {type(old).__name__}")
            continue
        got = list(new)
        assert got == old
        assert new == old and len(new) == len(old)
        assert all(type(x) is int for piece in got for x in piece)
        if old:
            assert new[0] == old[0] and new[-1] == old[-1] and new[:3] == old[:3]
        if not roots:
            assert list(timeline.task_spans(t)) == [s[:4] for s in old]
    return "; ".join(outcome)


def _random_trace(rng: random.Random, path, big=False) -> None:
    """A trace as the engine writes one, at random, with what damaged and cut-short files hold: iterations (roots
    of run()), spawn trees with repeated child indices, ends on other workers and repeated ends, task_end_last,
    resumptions, idle and sleep, memory records (some in the runtime's lane), steals, touches, unrecorded and
    never-begun spawners, now and then spawners that form a loop, a trace cut short (records or bytes)."""
    workers = rng.randint(1, 4)
    lanes = {w: [] for w in list(range(workers)) + [RT]}
    count = {w: 0 for w in range(workers)}
    begin_rec = {}  # serial -> its task_begin record (a list: b is set again for a loop)
    t = 0

    def emit(lane, kind, a=0, b=0, index=0):
        nonlocal t
        t += rng.choice((0, 1, 1, 2, 7))  # equal times too: the sorts must be stable
        rec = [t, a, b, index, kind, lane]
        lanes[lane].append(rec)
        return rec

    def begin(w, parent, index):
        count[w] += 1
        s = (w << 48) | count[w]
        begin_rec[s] = emit(w, 1, 0, parent, index)
        return s

    earlier = []  # serials of former iterations
    steps_max = 400 if big else 50
    for _ in range(rng.choice((0, 1, 1, 2, 3, 4, 6))):
        emit(RT, 7)
        root_w = rng.randrange(workers)
        root = begin(root_w, 0, 0)
        mine, live, last_on = [root], {root}, {root: root_w}
        children = {}
        for _ in range(rng.randint(0, steps_max)):
            op = rng.random()
            w = rng.randrange(workers)
            if op < 0.3:
                p = rng.choice(mine)
                u = rng.random()
                if u < 0.05:
                    p = UNRECORDED
                elif u < 0.08:
                    p = (7 << 48) | rng.randint(1, 5)  # a spawner that never began
                elif u < 0.11 and earlier:
                    p = rng.choice(earlier)
                ix = children.get(p, 0) if rng.random() < 0.85 else rng.randrange(3)
                children[p] = children.get(p, 0) + 1
                s = begin(w, p, ix)
                mine.append(s)
                live.add(s)
                last_on[s] = w
            elif op < 0.5 and live:
                s = rng.choice(sorted(live))
                on = last_on[s] if rng.random() < 0.85 else w
                if rng.random() < 0.1 and count.get(on):
                    emit(on, 21)  # the end of the lane's latest begin
                else:
                    emit(on, 2, s)
                if rng.random() < 0.9:
                    live.discard(s)
            elif op < 0.62:
                s = rng.choice(sorted(live)) if live and rng.random() < 0.9 else rng.choice(mine + [12345])
                emit(w, 3, s)
                last_on[s] = w
            elif op < 0.74:
                lane = w if rng.random() < 0.95 else RT
                huge = rng.random() < 0.01
                emit(lane, 16, rng.randrange(2**62 if huge else 100), rng.randrange(2**63 if huge else 5000),
                     rng.randrange(64))
            elif op < 0.8:
                emit(w, 14)
                if rng.random() < 0.8:
                    emit(w, 15)
            elif op < 0.84:
                emit(w, 5)
                emit(w, 6)
            elif op < 0.88:
                emit(w, 13, rng.randrange(workers), 1)
            elif op < 0.91:
                emit(w, 4, 4096 * rng.randint(1, 9), 64, rng.randrange(3))
            elif op < 0.94:
                emit(w, 12, rng.choice(mine), 0, rng.randrange(4))
            elif op < 0.96:
                emit(RT, rng.choice((2, 3, 16)), rng.choice(mine), rng.randrange(9), rng.randrange(9))
        for s in sorted(live):
            if s != root and rng.random() < 0.9:
                emit(last_on[s], 2, s)
        emit(RT if rng.random() < 0.3 else root_w, 2, root)
        emit(root_w, 14)
        emit(RT, 8)
        earlier += mine
    if len(begin_rec) >= 2 and rng.random() < 0.08:  # a damaged file: spawners that form a loop
        cycle = rng.sample(sorted(begin_rec), rng.randint(1, min(3, len(begin_rec))))
        for s, p in zip(cycle, cycle[1:] + cycle[:1]):
            begin_rec[s][2] = p
    if rng.random() < 0.25:  # cut short: records after some time lost
        cut = rng.randint(0, t)
        for lane in lanes:
            lanes[lane] = [rec for rec in lanes[lane] if rec[0] <= cut]
    chunks = []
    for lane, recs in lanes.items():
        at = 0
        while at < len(recs):
            n = min(rng.randint(1, max(1, len(recs) // 2)), len(recs) - at)
            chunks.append((recs[at + n - 1][0], lane, recs[at:at + n]))
            at += n
    chunks.sort(key=lambda c: c[0])
    domains = [rng.randrange(workers) for _ in range(workers)] if rng.random() < 0.5 else None
    header = (b"ROOSTTRC" + struct.pack("<IIQQI", 6, workers, 0, 0, 4) + b"test" + struct.pack("<QQ", 1024, 4096)
              + struct.pack(f"<{workers}I", *(domains or [0] * workers)))
    body = b"".join(_chunk(lane, (t, t), [tuple(r) for r in recs]) for _, lane, recs in chunks)
    body += _chunk(0xFFFE, (t, t), [])
    if body and rng.random() < 0.1:  # a write that failed part-way: the file ends inside a chunk
        body = body[:rng.randrange(len(body))]
    path.write_bytes(header + body)


def test_task_tools_match_reference_on_random_traces(tmp_path, hang_bound):
    rng = random.Random(20240611)
    p = tmp_path / "r.trace"
    outcomes = {}
    for i in range(400):
        _random_trace(rng, p, big=i % 20 == 0)
        t = read(p)
        outcome = _check(t)
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    # The cases that matter were drawn: loops (an error from both) and traces without one.
    assert outcomes.get("", 0) > 300
    assert outcomes.get("mapping: TraceError; task_memory: TraceError; task_memory: TraceError", 0) >= 3, outcomes


def test_task_tools_match_reference_on_any_records(hang_bound):
    # Records no engine writes (a Trace built by hand): lanes interleaved, serials begun twice, task_begins in
    # the runtime's lane, spawner links drawn from a small pool (loops, self-spawners, chains into loops).
    rng = np.random.default_rng(7)
    errors = 0
    for i in range(300):
        n = int(rng.integers(0, 120))
        workers = int(rng.integers(1, 5))
        recs = np.zeros(n, RECORD)
        recs["t_ns"] = np.sort(rng.integers(0, 60, n))
        recs["kind"] = rng.choice([1, 1, 1, 2, 2, 3, 5, 14, 16, 16, 13, 4], n)
        recs["worker"] = np.where(rng.random(n) < 0.05, RT, rng.integers(0, workers, n))
        pool = np.array([0, UNRECORDED] + list(range(1, 40)), dtype=np.uint64)
        recs["a"] = pool[rng.integers(2, len(pool) if i % 3 else 12, n)]
        recs["b"] = np.where(rng.random(n) < 0.3, np.uint64(0), pool[rng.integers(0, len(pool), n)])
        recs["b"][recs["kind"] == 13] = 1
        recs["index"] = rng.integers(0, 4, n)
        if i % 2:
            recs = recs[rng.permutation(n)]  # not lane by lane, nor in time order
        domains = [] if i % 4 == 0 else list(rng.integers(0, workers, workers))
        t = Trace(workers, 0, "test", 0, 0, domains, recs)
        errors += bool(_check(t))
    assert 10 < errors < 290


def test_task_tools_match_reference_on_a_chain_of_20000_nested_groups(tmp_path, hang_bound):
    # The depth that took the dict-and-tuple versions gigabytes and the list versions tens of seconds.
    depth = 20000
    # Records as the reader gives them: a task_begin's serial is lane << 48 | its count in the lane.
    recs = []
    count = {0: 0, 1: 0}
    t = 0
    for it in range(2):
        chain = []
        for d in range(depth):
            w = 0 if d < depth - 1 else 1 - it
            count[w] += 1
            recs.append((t, (w << 48) | count[w], chain[-1][0] if chain else 0, 0, 1, w))
            chain.append(((w << 48) | count[w], w))
            t += 1
        if it == 0:
            recs.append((t, 0, 0, 0, 16, 1 - it))
        for s, w in reversed(chain):
            recs.append((t, s, 0, 0, 2, w))
            t += 1
    arr = np.zeros(len(recs), RECORD)
    for i, f in enumerate(("t_ns", "a", "b", "index", "kind", "worker")):
        arr[f] = [r[i] for r in recs]
    arr = arr[np.argsort(arr["worker"], kind="stable")]
    assert _check(Trace(2, 0, "test", 0, 0, [0, 1], arr)) == ""
    m = mapping.mapping(Trace(2, 0, "test", 0, 0, [0, 1], arr))
    assert m.iterations == 2 and m.tasks_per_iteration == depth and m.moved_leaves == [1.0]
