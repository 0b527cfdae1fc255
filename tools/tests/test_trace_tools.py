"""Trace reading, KRD against the brute-force definition, and a real traced run of roost-bench."""
import os
import random
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from roost_tools import analyze, krd, timeline
from roost_tools.trace import KIND, RUNTIME_BLOCK, UNRECORDED, TraceError, read


def test_krd_matches_brute_force_on_random_traces():
    rng = random.Random(3)
    for _ in range(30):
        n = rng.randint(1, 300)
        keys = [rng.randint(0, 40) for _ in range(n)]
        size_of = {k: rng.choice([8, 64, 4096, 100000]) for k in set(keys)}
        sizes = [size_of[k] for k in keys]
        assert np.array_equal(krd.stack_distances(keys, sizes), krd.stack_distances_brute(keys, sizes))


def test_krd_known_answers_and_bins():
    # a b c a: a's reuse distance is |b| + |c|
    d = krd.stack_distances(["a", "b", "c", "a", "b"], [10, 20, 30, 10, 20])
    assert d.tolist() == [krd.COLD, krd.COLD, krd.COLD, 50, 40]
    h = krd.histogram(d, l2=45, llc=100)
    assert (h.close, h.near, h.far, h.cold) == (1, 1, 0, 3)


_STORES = {"a": (2, 3, 4, 9, 10, 11, 12, 13, 16, 17, 18, 19, 20, 22, 23, 24), "b": (1, 4, 9, 10, 11, 13, 16, 17),
           "index": (1, 4, 9, 10, 11, 12, 16, 18, 19, 20)}


def _chunk(lane: int, clock, records) -> bytes:
    """One chunk as the tracer writes it (trace_format.hpp): records (t_ticks, a, b, index, kind, worker) in
    columns, each field only where its kind stores it; a task_begin's a is implied."""
    base = min((r[0] for r in records), default=0)
    cols = {name: [r[i] for r in records if r[4] in _STORES[name]] for i, name in ((1, "a"), (2, "b"), (3, "index"))}
    body = (struct.pack(f"<{len(cols['a'])}Q", *cols["a"]) + struct.pack(f"<{len(cols['b'])}Q", *cols["b"])
            + struct.pack(f"<{len(records)}I", *(r[0] - base for r in records))
            + struct.pack(f"<{len(cols['index'])}I", *cols["index"]) + bytes(r[4] for r in records))
    body += bytes(-len(body) % 8)
    return struct.pack("<IIQQQIIII", lane, len(records), *clock, base, len(cols["a"]), len(cols["b"]),
                       len(cols["index"]), 0) + body


def _write_file(path: Path, workers: int, chunks, domains=None, version=3, start=(0, 0), end=True,
                caches=(1024, 4096)):
    """A trace as the tracer writes it: `chunks` is [(lane, (ticks, ns), records)] in file order; the end
    chunk's clock pair is the last chunk's. `caches`: the header's L2 and LLC bytes (0: not described)."""
    start_ticks, start_ns = start
    with open(path, "wb") as f:
        f.write(b"ROOSTTRC" + struct.pack("<IIQQI", version, workers, start_ns, start_ticks, 4) + b"test")
        f.write(struct.pack("<QQ", *caches) + struct.pack(f"<{workers}I", *(domains or [0] * workers)))
        clock = start
        for lane, clock, records in chunks:
            f.write(_chunk(lane, clock, records))
        if end:
            f.write(_chunk(0xFFFE, clock, []))


def _write_trace(path: Path, version=3, records=()):
    _write_file(path, 1, [(0, (1, 1), list(records))], version=version)


def test_versions_3_and_4_are_read_and_failed_steals_are_added_up(tmp_path, capsys):
    from roost_tools import analyze
    p = tmp_path / "t.trace"
    # version 3: a failed attempt was a steal record with b = 0, read as a steal_failures record of one attempt
    # (summary counted it as a steal)
    _write_trace(p, version=3, records=[(1, 1, 0, 0, 13, 0), (2, 1, 1, 0, 13, 0), (3, 1, 0, 0, 13, 0)])
    r = read(p).records
    assert r["kind"].tolist() == [17, 13, 17]
    assert r["a"].tolist() == [1, 1, 1] and r["b"].tolist() == [1, 1, 1]
    assert analyze.main(["summary", str(p)]) == 0
    out = capsys.readouterr().out
    assert "steal                  1" in out and "(failed steal attempts) 2" in out
    # version 4: the failed attempts of a search are one steal_failures record (17): a = attempts, b = last victim
    _write_trace(p, version=4, records=[(1, 1000, 1, 0, 17, 0), (2, 1, 1, 0, 13, 0), (3, 5, 1, 0, 17, 0)])
    t = read(p)
    assert t.records["a"].tolist() == [1000, 1, 5] and t.records["b"].tolist() == [1, 1, 1]
    assert analyze.main(["summary", str(p)]) == 0
    out = capsys.readouterr().out
    assert "steal_failures         2" in out and "(failed steal attempts) 1005" in out


def test_version_5_short_touches_are_read_as_touches(tmp_path):
    p = tmp_path / "t.trace"
    # kinds 18-20: a touch under 4 GiB, the mode in the kind, the size in index; 4 stays for larger ones
    _write_trace(p, version=5, records=[(1, 4096, 0, 64, 18, 0), (2, 8192, 0, 100, 19, 0), (3, 64, 0, 7, 20, 0),
                                        (4, 1 << 20, 5 << 30, 1, 4, 0)])
    r = read(p).records
    assert r["kind"].tolist() == [4, 4, 4, 4]
    assert r["a"].tolist() == [4096, 8192, 64, 1 << 20]
    assert r["b"].tolist() == [64, 100, 7, 5 << 30]
    assert r["index"].tolist() == [0, 1, 2, 1]
    # a version 4 file cannot hold them
    _write_trace(p, version=4, records=[(1, 4096, 0, 64, 18, 0)])
    with pytest.raises(TraceError, match="unknown kind 18"):
        read(p)


def test_version_6_compact_ends_and_tile_shapes_are_read_whole(tmp_path):
    p = tmp_path / "t.trace"
    s1, s2 = 1, 2  # worker 0's serials: implied by the count of its task_begins
    rows = (64 << 32) | 4
    chunk1 = [(1, 0, 0, 0, 1, 0), (2, 4096, rows, 256, 9, 0), (3, 4160, 0, 0, 23, 0), (4, 0, 0, 0, 21, 0),
              (5, 0, 0, 0, 1, 0)]
    # a new chunk: its first touch_rows is whole again; the end of s1 (not the latest begin) keeps its serial
    chunk2 = [(6, 8192, rows, 512, 10, 0), (7, 9000, 0, 0, 24, 0), (8, 0, 0, 0, 21, 0), (9, s1, 0, 0, 2, 0)]
    _write_file(p, 1, [(0, (10, 10), chunk1), (0, (10, 10), chunk2)], version=6)
    r = read(p).records
    assert r["kind"].tolist() == [1, 9, 10, 2, 1, 10, 11, 2, 2]
    assert r["a"].tolist() == [s1, 4096, 4160, s1, s2, 8192, 9000, s2, s1]
    assert r["b"].tolist() == [0, rows, rows, 0, 0, rows, rows, 0, 0]
    assert r["index"].tolist() == [0, 256, 256, 0, 0, 512, 512, 0, 0]
    # what cannot be decoded: a repeat whose chunk had no touch_rows before it, an end before any begin
    _write_file(p, 1, [(0, (10, 10), chunk1), (0, (10, 10), [(6, 8192, 0, 0, 22, 0)])], version=6)
    with pytest.raises(TraceError, match="repeats one its chunk has not had"):
        read(p)
    _write_trace(p, version=6, records=[(1, 0, 0, 0, 21, 0)])
    with pytest.raises(TraceError, match="task_end_last before any task_begin"):
        read(p)
    # a version 5 file cannot hold them
    _write_trace(p, version=5, records=[(1, 0, 0, 0, 1, 0), (2, 0, 0, 0, 21, 0)])
    with pytest.raises(TraceError, match="unknown kind 21"):
        read(p)


def test_reader_errors_name_the_byte_offset(tmp_path):
    p = tmp_path / "t.trace"
    _write_trace(p, records=[(1, 2, 3, 4, 1, 0)])
    assert len(read(p).records) == 1
    data = p.read_bytes()
    p.write_bytes(data[:38])  # inside the header: nothing to read
    with pytest.raises(TraceError, match=r"truncated at byte 38, inside the topology \(bytes 36 to "):
        read(p)
    p.write_bytes(data[:32])  # inside the header's fields: where the file ends, not where the field began
    with pytest.raises(TraceError, match=r"truncated at byte 32, inside the header \(bytes 12 to 35\)"):
        read(p)
    _write_trace(p, version=9)
    with pytest.raises(TraceError, match="version 9 at byte 8"):
        read(p)
    p.write_bytes(b"hello")
    with pytest.raises(TraceError, match="not a roost trace"):
        read(p)
    assert analyze.main(["summary", str(p)]) == 2
    # A start clock of 2^63 ticks or more (a damaged byte 31) was an OverflowError and a traceback.
    _write_trace(p, records=[(1, 2, 3, 4, 1, 0)])
    damaged = bytearray(p.read_bytes())
    damaged[31] |= 0x80
    p.write_bytes(bytes(damaged))
    with pytest.raises(TraceError, match="damaged at byte 24: the start clock"):
        read(p)
    for command in ("summary", "krd", "mapping"):
        assert analyze.main([command, str(p)]) == 2


@pytest.mark.skipif("ROOST_BENCH" not in os.environ, reason="needs the built roost-bench (run through ctest)")
def test_traced_benchmark_gives_krd_and_timeline(tmp_path):
    trace = tmp_path / "heat.trace"
    env = dict(os.environ, ROOST_TRACE=str(trace))
    subprocess.run([os.environ["ROOST_BENCH"], "--bench", "heat2d", "--small", "--variants", "ws", "--workers", "2",
                    "--reps", "2", "--warmup", "0"], check=True, capture_output=True, timeout=120, env=env)
    t = read(trace)
    assert t.workers == 2 and len(t.llc_domain) == 2
    import json
    events = json.loads(Path(str(trace) + ".json").read_text())["traceEvents"]  # the Chrome/Perfetto form
    assert {"M", "X"} <= {e["ph"] for e in events}
    assert all(isinstance(e["tid"], int) for e in events)
    hist = krd.krd(t)
    assert hist["all"].total == len(krd.accesses(t)) > 0
    assert hist["all"].cold > 0
    png = timeline.plot(t, tmp_path / "tl.png")
    assert png.stat().st_size > 1000
    assert krd.plot(hist, tmp_path / "krd.png").stat().st_size > 1000
    assert analyze.main(["markdown", str(trace), "--name", "x", "--out-dir", str(tmp_path)]) == 0
    assert len(timeline.task_spans(t)) > 0


@pytest.mark.skipif("ROOST_BENCH" not in os.environ, reason="needs the built roost-bench (run through ctest)")
def test_ovr_on_a_simulated_pair_of_traces(tmp_path):
    """roost-analyze reads simulated traces unchanged: timestamps are virtual, so the decomposition of a
    simulated pair is a function of program, topology and seed, the same on every machine and every run."""
    from roost_tools import ovr

    def traced(workers: int, name: str) -> Path:
        trace = tmp_path / name
        env = dict(os.environ, ROOST_TRACE=str(trace), ROOST_SIM_SEED="7")
        subprocess.run([os.environ["ROOST_BENCH"], "--bench", "heat2d", "--size", "258x4", "--variants", "ws",
                        "--workers", str(workers), "--reps", "1", "--warmup", "1", "--platform", "sim",
                        "--topology", "pack:2 l3:1(size=1MiB) core:2 pu:1"],
                       check=True, capture_output=True, timeout=120, env=env)
        return trace

    one, four, again = traced(1, "one.trace"), traced(4, "four.trace"), traced(4, "again.trace")
    d = ovr.decompose(read(four), read(one), skip=1)  # the warm-up run left out
    assert d.workers == 4
    assert 0 < d.work_1 <= d.t_1 and 0 < d.work_n <= 4 * d.t_n
    assert d.ovr >= 1 and d.ovr_1 >= 1
    assert d.t_n == pytest.approx(d.work_1 / 4 * d.ovr * d.wti)
    assert d.t_n < d.t_1  # four simulated cores finish sooner than one
    same = ovr.decompose(read(again), read(one), skip=1)
    assert (same.t_n, same.work_n) == (d.t_n, d.work_n)  # virtual time: bit for bit
    assert analyze.main(["ovr", str(four), str(one), "--skip", "1"]) == 0


def _synthetic(path: Path, workers: int, records, domains=None, caches=(1024, 4096)):
    """Records with times in ns (ticks = ns), one chunk per lane. Task serials in `records` are names: they
    become the serials the format implies (lane << 48 | the task_begin's count in its lane)."""
    by = {}
    for r in records:
        by.setdefault(r[5], []).append(r)
    serial = {0: 0, UNRECORDED: UNRECORDED}
    for w, rs in sorted(by.items()):
        begins = [r[1] for r in rs if r[4] == 1]
        serial.update({name: (w << 48) | n for n, name in enumerate(begins, start=1)})
    renamed = {w: [(t, serial.get(a, a) if k in (1, 2, 3, 12) else a, serial[b] if k == 1 else b, i, k, lane)
                   for t, a, b, i, k, lane in rs] for w, rs in by.items()}
    last = max((r[0] for r in records), default=0)
    _write_file(path, workers, [(w, (last, last), rs) for w, rs in sorted(renamed.items())], domains=domains,
                caches=caches)


def test_reader_joins_each_lanes_chunks_and_converts_ticks(tmp_path, capsys):
    # Chunks as workers write them, interleaved; start at tick 1000 = 5000 ns, the last chunk's clock pair
    # (3000 ticks, 6000 ns): 0.5 ns a tick (the third chunk's pair says 2). Records: (ticks, a, b, index,
    # kind, worker).
    w1 = 1 << 48
    chunks = [(0, (1100, 5050), [(1010, 0, 0, 0, 1, 0), (1020, 1, 0, 0, 12, 0)]),            # begin 0:1, spawn
              (1, (1200, 5100), [(1030, 0, 1, 0, 1, 1), (1031, 0, 1, 1, 13, 1)]),             # begin 1:1, steal
              (0, (1300, 5600), [(1040, 1, 0, 0, 2, 0), (1050, 0, 1, 7, 1, 0)]),              # end 0:1, begin 0:2
              (0xFFFF, (3000, 6000), [(1000, 0, 0, 0, 7, 0xFFFF), (1060, 0, 0, 0, 8, 0xFFFF)])]
    p = tmp_path / "c.trace"
    _write_file(p, 2, chunks, start=(1000, 5000))
    t = read(p)
    assert t.complete
    r = t.records
    assert r["worker"].tolist() == [0, 0, 0, 0, 1, 1, 0xFFFF, 0xFFFF]  # lane by lane, each in its order
    assert r["kind"].tolist() == [1, 12, 2, 1, 1, 13, 7, 8]
    assert r["t_ns"].tolist() == [5, 10, 20, 25, 15, 15, 0, 30]
    assert r["a"].tolist() == [1, 1, 1, 2, w1 | 1, 0, 0, 0]  # task_begin serials are implied by their lane
    assert r["b"].tolist() == [0, 0, 0, 1, 1, 1, 0, 0]
    assert r["index"].tolist() == [0, 0, 0, 7, 0, 0, 0, 0]
    # Cut short (no end chunk): readable, not complete, times from the last chunk's clock pair (2 ns a tick).
    _write_file(p, 2, chunks[:3], start=(1000, 5000), end=False)
    t = read(p)
    assert not t.complete and len(t.records) == 6
    assert t.records["t_ns"].tolist() == [20, 40, 80, 100, 60, 62]
    assert analyze.main(["summary", str(p)]) == 0
    assert "cut short" in capsys.readouterr().err
    # The Markdown section says so too, not only stderr (an outside-user campaign: "0 iterations" and no word).
    assert analyze.main(["markdown", str(p), "--name", "cut", "--out-dir", str(tmp_path)]) == 0
    assert "*This trace was cut short" in capsys.readouterr().out
    data = p.read_bytes()
    bad = bytearray(data)
    first_chunk = 8 + 4 + 4 + 8 + 8 + 4 + 4 + 16 + 8  # its columns: a[1], b[1], dt[2], index[2], kind[2]
    bad[first_chunk + 48 + 8 + 8 + 8 + 8 + 1] = 2  # the spawn's kind says task_end, which has no index
    p.write_bytes(bytes(bad))
    with pytest.raises(TraceError, match="damaged"):
        read(p)


def test_a_trace_cut_inside_a_chunk_keeps_its_whole_chunks_and_says_so_once(tmp_path, capsys):
    # A write that failed part-way (a full disk, ulimit -f) leaves the file cut inside a chunk: the whole
    # chunks before it are the trace, and the reader says where it was cut (it refused the whole file).
    chunks = [(0, (10, 10), [(1, 0, 0, 0, 1, 0), (2, 0, 0, 0, 14, 0)]),
              (1, (20, 20), [(3, 0, 0, 0, 1, 1)]),
              (0, (30, 30), [(4, 0, 0, 0, 15, 0), (5, 0, 0, 0, 1, 0), (6, 0, 0, 0, 14, 0)])]
    p = tmp_path / "cut.trace"
    _write_file(p, 2, chunks)
    data = p.read_bytes()
    header = 8 + 4 + 4 + 8 + 8 + 4 + 4 + 16 + 8
    third = header + 2 * (48 + 24)  # the chunks before it: 48 bytes, then b, dt, index and kind, padded to 24
    assert read(p).records["kind"].tolist() == [1, 14, 15, 1, 14, 1]
    for cut in (third + 48 + 5, third + 20, third):  # in its records, in its header, at its start
        p.write_bytes(data[:cut])
        t = read(p)
        assert t.records["kind"].tolist() == [1, 14, 1] and not t.complete
        assert (t.cut_at, t.lost_from) == ((cut, third) if cut > third else (None, None))
    p.write_bytes(data[:third + 48 + 5])
    assert analyze.main(["summary", str(p)]) == 0
    captured = capsys.readouterr()
    assert "task_begin             2" in captured.out
    err = captured.err.splitlines()
    # Then what the cut left of the runs: the runtime's lane (the iteration records) is lost, the roots are not.
    assert err == [f"roost-analyze: {p} was cut short at byte {third + 48 + 5}, inside a chunk (a write that failed "
                   f"part-way: a full disk, a file size limit, a program killed while writing): read the whole "
                   f"chunks before byte {third}; the rest of the trace is lost",
                   f"roost-analyze: {p}: its iteration records hold 0 whole run(s), which ovr measures, and its tasks "
                   f"2 root(s), which mapping compares"]
    # Cut in the last chunk's padding: its records are whole, what followed it (the end chunk) is lost.
    p.write_bytes(data[:third + 48 + 30])  # its body: b, 3 dt, index, 3 kinds (27 bytes)
    t = read(p)
    assert len(t.records) == 6 and (t.cut_at, t.lost_from) == (third + 48 + 30, third + 48 + 30)


@pytest.mark.skipif("ROOST_BENCH" not in os.environ, reason="needs the built roost-bench (run through ctest)")
def test_a_real_trace_cut_by_a_failed_write_is_read_up_to_the_cut(tmp_path):
    trace = tmp_path / "fib.trace"
    env = dict(os.environ, ROOST_TRACE=str(trace), ROOST_TRACE_DEPTH="all")
    subprocess.run([os.environ["ROOST_BENCH"], "--bench", "fib", "--size", "20", "--variants", "ws", "--workers", "2",
                    "--reps", "1", "--warmup", "0"], check=True, capture_output=True, timeout=120, env=env)
    whole = read(trace)
    assert whole.complete and whole.cut_at is None
    data = trace.read_bytes()
    # The chunks' starts (trace_format.hpp: a 48-byte header, then columns padded to 8 bytes).
    pos = 8 + 4 + 4 + 8 + 8 + 4 + struct.unpack_from("<I", data, 32)[0] + 16 + 4 * whole.workers
    starts = []
    while pos < len(data):
        lane, count, _, _, _, na, nb, ni, _ = struct.unpack_from("<IIQQQIIII", data, pos)
        body = 8 * na + 8 * nb + 4 * count + 4 * ni + count
        starts.append((pos, lane, count, body))
        pos += 48 + (body + 7) // 8 * 8
    # A chunk after the third with a body of more than 1000 bytes (a lane's buffer may be written early, small,
    # when its clock jumps): the cut lands inside it, as `truncate -s` or a full disk leaves a file. The first
    # such chunk before which the root task's begin lies: which lane's chunks come first is the run's schedule,
    # and a cut before the root's begin leaves no root and no run, which roost-analyze rightly does not warn of
    # (the first such chunk alone made this test fail now and then at two workers).
    cut = tmp_path / "cut.trace"

    def cut_before(i):
        cut.write_bytes(data[:starts[i][0] + 48 + 1000])
        t = read(cut)
        task_begin = next(c for c, v in KIND.items() if v == "task_begin")
        has_root = np.any((t.records["kind"] == task_begin) & (t.records["b"] == 0) & (t.records["worker"] != RUNTIME_BLOCK))
        return t if has_root else None

    k = next((i for i in range(3, len(starts)) if starts[i][3] > 1000 and cut_before(i) is not None), None)
    assert k is not None, [s[3] for s in starts]
    at = starts[k][0]
    t = cut_before(k)
    assert (t.cut_at, t.lost_from) == (at + 48 + 1000, at) and not t.complete
    kept = sum(s[2] for s in starts[:k])
    assert len(t.records) == kept
    for w in range(whole.workers):  # each lane's records are the start of its records in the whole trace
        mine, all_ = t.records[t.records["worker"] == w], whole.records[whole.records["worker"] == w]
        assert np.array_equal(mine[["a", "b", "index", "kind"]], all_[: len(mine)][["a", "b", "index", "kind"]])
    run = subprocess.run([sys.executable, "-m", "roost_tools.analyze", "summary", str(cut)], capture_output=True,
                         text=True, timeout=120, cwd=Path(__file__).parent.parent)
    assert run.returncode == 0 and "task_begin" in run.stdout
    assert run.stderr.count("\n") == 2 and f"cut short at byte {at + 48 + 1000}" in run.stderr
    assert "its iteration records hold 0 whole run(s), which ovr measures, and its tasks 1 root(s)" in run.stderr
    assert "Traceback" not in run.stderr


@pytest.mark.skipif("ROOST_BENCH" not in os.environ, reason="needs the built roost-bench (run through ctest)")
def test_a_trace_of_many_runs_streams_in_many_chunks(tmp_path):
    trace = tmp_path / "fib.trace"
    env = dict(os.environ, ROOST_TRACE=str(trace), ROOST_TRACE_DEPTH="all")  # every task: none may be lost
    subprocess.run([os.environ["ROOST_BENCH"], "--bench", "fib", "--size", "20", "--variants", "ws", "--workers", "2",
                    "--reps", "5", "--warmup", "1"], check=True, capture_output=True, timeout=120, env=env)
    t = read(trace)
    r = t.records
    assert t.complete
    assert len(r) > 10 * 2560  # more than ten chunks' worth (tracer::kChunkRecords a chunk)
    runs = len(t.of_kind("iteration_begin"))
    assert runs == 6 == len(t.of_kind("iteration_end"))
    begins = t.of_kind("task_begin")
    assert len(begins) == runs * 10946  # fib(20) begins 10946 tasks: none lost
    assert len(np.unique(begins["a"])) == len(begins)
    assert set(t.of_kind("task_end")["a"].tolist()) <= set(begins["a"].tolist())
    parents = begins["b"][begins["b"] != 0]
    assert np.isin(parents, begins["a"]).all()
    assert len(t.of_kind("spawn")) == 0  # a begin names its spawner and rank: no spawn records
    for w in range(t.workers):  # each worker's events in time order
        mine = r[r["worker"] == w]["t_ns"].astype(np.int64)
        assert (np.diff(mine) >= 0).all()


def test_ovr_wti_on_synthetic_traces_with_known_answers(tmp_path):
    from roost_tools import ovr
    # Records: (t, a, b, index, kind, lane); kinds 1 begin, 2 end, 3 resume, 5/6 sleep, 7/8 iteration (runtime
    # lane), 14/15 idle (the scheduling loop). ovr reads no task end: the roots' are left out here.
    # 1 worker, two runs: 0-100 all work; 200-260 with the worker in its loop from 250.
    one = tmp_path / "one.trace"
    _synthetic(one, 1, [(0, 0, 0, 0, 7, 0xFFFF), (100, 0, 0, 0, 8, 0xFFFF), (200, 0, 0, 0, 7, 0xFFFF),
                        (260, 0, 0, 0, 8, 0xFFFF),
                        (0, 1, 0, 0, 1, 0), (200, 2, 0, 0, 1, 0), (250, 0, 0, 0, 14, 0), (260, 0, 0, 0, 15, 0)])
    # 2 workers, runs 0-60 and 100-130. Worker 0: the root from 0, which waits at its join from 20 (the
    # worker searches 20-35: not work), a stolen task 35-55, its loop 55-105 (across the runs' gap), a task
    # 105-125, its loop from 125 to the trace's end. Worker 1: its loop 0-10, a stolen task 10-40, its loop
    # 40-45, the root resumed here 45-58 (a task that moved: both of its segments are work), its loop from
    # 58 with a sleep 70-110 inside, a task 112-128, its loop from 128.
    two = tmp_path / "two.trace"
    _synthetic(two, 2, [(0, 0, 0, 0, 7, 0xFFFF), (60, 0, 0, 0, 8, 0xFFFF), (100, 0, 0, 0, 7, 0xFFFF),
                        (130, 0, 0, 0, 8, 0xFFFF),
                        (0, 1, 0, 0, 1, 0), (20, 0, 0, 0, 14, 0), (35, 0, 0, 0, 15, 0), (35, 2, 1, 0, 1, 0),
                        (55, 2, 0, 0, 2, 0), (55, 0, 0, 0, 14, 0), (105, 0, 0, 0, 15, 0), (105, 3, 0, 0, 1, 0),
                        (125, 3, 0, 0, 2, 0), (125, 0, 0, 0, 14, 0),
                        (0, 0, 0, 0, 14, 1), (10, 0, 0, 0, 15, 1), (10, 4, 1, 1, 1, 1), (40, 4, 0, 0, 2, 1),
                        (40, 0, 0, 0, 14, 1), (45, 0, 0, 0, 15, 1), (45, 1, 0, 0, 3, 1), (58, 0, 0, 0, 14, 1),
                        (70, 0, 0, 0, 5, 1), (110, 0, 0, 0, 6, 1), (112, 0, 0, 0, 15, 1), (112, 5, 0, 0, 1, 1),
                        (128, 5, 0, 0, 2, 1), (128, 0, 0, 0, 14, 1)])
    d = ovr.decompose(read(two), read(one))
    # Run 1: worker 0 works 60 - 15 - 5 = 40, worker 1 60 - 10 - 5 - 2 = 43; run 2: worker 0 30 - 5 - 5 = 20,
    # worker 1 30 - 12 - 2 = 16.
    assert (d.t_n, d.t_1, d.work_n, d.work_1) == (90, 160, 40 + 43 + 20 + 16, 150)
    assert d.ovr == pytest.approx(90 * 2 / 119)
    assert d.wti == pytest.approx(119 / 150)
    # Eq. 1 and eq. 4 hold (with the serial work as T_1).
    assert d.t_n == pytest.approx(d.work_1 / 2 * d.ovr * d.wti)
    assert d.speedup == pytest.approx(2 / (d.ovr * d.wti))
    assert d.ovr_1 == pytest.approx(160 / 150)
    # Leaving out the first run of each (a warm-up).
    d = ovr.decompose(read(two), read(one), skip=1)
    assert (d.t_n, d.t_1, d.work_n, d.work_1) == (30, 60, 36, 50)
    with pytest.raises(ValueError, match="--skip 2"):
        ovr.decompose(read(two), read(one), skip=2)
    with pytest.raises(ValueError, match="1 worker"):
        ovr.decompose(read(one), read(two))
    assert analyze.main(["ovr", str(two), str(one)]) == 0
    assert analyze.main(["ovr", str(two), str(one), "--skip", "1"]) == 0
    assert analyze.main(["ovr", str(two), str(one), "--skip", "5"]) == 2


def test_reuses_written_by_another_cache(tmp_path):
    # Workers 0 and 1 under cache 0, worker 2 under cache 1. Records: (t, base, bytes, mode, kind 4 = touch,
    # worker); mode 0 read, 1 write, 2 read-write.
    recs = [(0, 0x100, 64, 0, 4, 0),   # cache 0 reads X: cold
            (1, 0x200, 64, 1, 4, 0),   # cache 0 writes Y: cold
            (2, 0x100, 64, 1, 4, 2),   # cache 1 writes X: cold there
            (3, 0x100, 64, 0, 4, 1),   # cache 0 reads X again: written elsewhere since (1)
            (4, 0x200, 64, 0, 4, 1),   # cache 0 reads Y: its own write, a plain reuse
            (5, 0x100, 64, 2, 4, 0),   # cache 0 again: nobody else wrote X since t=3
            (6, 0x200, 64, 0, 4, 2),   # cache 1 reads Y: cold there
            (7, 0x100, 64, 0, 4, 2)]   # cache 1 reads X: cache 0 wrote it at t=5 (read-write) (2)
    p = tmp_path / "w.trace"
    _synthetic(p, 3, recs, domains=[0, 0, 1])
    t = read(p)
    assert krd.written_elsewhere(t) == {"domain 0": (5, 1), "domain 1": (3, 1), "all": (8, 2)}
    assert krd.krd(t)["all"].cold == 4  # the seed's bins are unchanged: the two are reuses there
    # Under one cache nothing is written elsewhere.
    _synthetic(p, 3, recs)
    assert krd.written_elsewhere(read(p))["all"] == (8, 0)
    assert analyze.main(["krd", str(p)]) == 0


def test_mapping_on_a_synthetic_trace_with_known_answers(tmp_path):
    from roost_tools import mapping
    # Two iterations on 2 workers. Iteration 0: root 1 (w0) spawns A (2, w0) and B (3, w1); B spawns B.0 (4, w1).
    # Iteration 1: root 5 (w0) spawns A (6, w1) and B (7, w1); B.0 (8, w0). Leaves: A and B.0 in each.
    recs = [(0, 1, 0, 0, 1, 0), (1, 2, 1, 0, 1, 0), (2, 3, 1, 1, 1, 1), (3, 4, 3, 0, 1, 1),
            (4, 0, 1, 0, 13, 1),  # worker 1 stole once, from worker 0
            (10, 5, 0, 0, 1, 0), (11, 6, 5, 0, 1, 1), (12, 7, 5, 1, 1, 1), (13, 8, 7, 0, 1, 0),
            (14, 1, 0, 0, 13, 0)]  # a failed steal does not count
    p = tmp_path / "m.trace"
    _synthetic(p, 2, recs)
    m = mapping.mapping(read(p))
    assert m.iterations == 2
    assert m.tasks_per_iteration == 4 and m.leaves_per_iteration == 2
    assert m.moved_leaves == [1.0]        # A: w0 -> w1, B.0: w1 -> w0
    assert m.moved_tasks == [0.5]         # the root (w0) and B (w1) stayed: 2 of 4
    assert m.leaves_per_worker == [1.0, 1.0]
    assert m.steals_per_iteration == 0.5
    assert m.domains == 1 and m.moved_leaves_domain == [0.0]  # both workers under one cache
    assert analyze.main(["mapping", str(p)]) == 0
    # The same schedule with each worker under a cache of its own: both leaves changed cache domain.
    _synthetic(p, 2, recs, domains=[0, 1])
    m = mapping.mapping(read(p))
    assert m.domains == 2 and m.moved_leaves_domain == [1.0]
    assert any("another cache domain" in line for line in mapping.describe(m))
    # Four workers, two per cache: leaf A moves from w0 to w1 (same cache), B.0 from w1 to w2 (the other one).
    recs4 = [(0, 1, 0, 0, 1, 0), (1, 2, 1, 0, 1, 0), (2, 3, 1, 1, 1, 1), (3, 4, 3, 0, 1, 1),
             (10, 5, 0, 0, 1, 0), (11, 6, 5, 0, 1, 1), (12, 7, 5, 1, 1, 1), (13, 8, 7, 0, 1, 2)]
    _synthetic(p, 4, recs4, domains=[0, 0, 1, 1])
    m = mapping.mapping(read(p))
    assert m.moved_leaves == [1.0] and m.moved_leaves_domain == [0.5]
    # A stolen task whose spawner was not recorded (its parent serial UNRECORDED, version 4) is neither an
    # iteration's root nor named: the two iterations stay two (version 3 wrote 0 and made it a third).
    orphan = sorted(recs + [(3, 9, UNRECORDED, 1, 1, 1), (13, 10, UNRECORDED, 1, 1, 1)], key=lambda r: r[0])
    _synthetic(p, 2, orphan)
    m = mapping.mapping(read(p))
    assert m.iterations == 2 and m.tasks_per_iteration == 4 and m.moved_leaves == [1.0]
    assert m.left_out == 2 and any("2 tasks left out" in line for line in mapping.describe(m))
    # The line names the children no depth records, not only the depth (which sent a trace at `all` round).
    assert any("another task than its creator" in line for line in mapping.describe(m))


def test_mapping_and_timeline_follow_a_deep_chain(tmp_path):
    # Two iterations of a chain of 3,000 nested tasks on 2 workers, every level on the same worker both times
    # but the leaf: mapping names every task (paths interned, not stored whole: a chain of 20,000 took 1.6 GB),
    # and the timeline closes every piece (its running set is a dict: list lookups made it quadratic).
    from roost_tools import mapping
    depth = 3000
    recs, t, name = [], 0, 1
    for it in range(2):
        names = []
        for d in range(depth):
            parent = names[-1] if names else 0
            recs.append((t, name, parent, 0, 1, 0 if d < depth - 1 else it))
            names.append(name)
            name += 1
            t += 1
        for d, n in enumerate(reversed(names)):
            recs.append((t, n, 0, 0, 2, it if d == 0 else 0))
            t += 1
    p = tmp_path / "chain.trace"
    _synthetic(p, 2, sorted(recs, key=lambda r: r[0]))
    tr = read(p)
    m = mapping.mapping(tr)
    assert m.iterations == 2 and m.left_out == 0 and m.tasks_per_iteration == depth
    assert m.moved_leaves == [1.0] and m.moved_tasks == [pytest.approx(1 / depth)]
    spans = timeline.task_memory(tr, roots=True)
    assert len(spans) == 2 * depth


def test_mapping_says_when_consecutive_iterations_share_no_leaf(tmp_path):
    from roost_tools import mapping
    # Iteration 0: root 1 spawns A (2) and B (3), two leaves; iteration 1: root 4 alone, a leaf at another path.
    # It said "one iteration: nothing to compare it with" of two (an outside-user campaign).
    p = tmp_path / "d.trace"
    _synthetic(p, 2, [(0, 1, 0, 0, 1, 0), (1, 2, 1, 0, 1, 0), (2, 3, 1, 1, 1, 1), (10, 4, 0, 0, 1, 0)])
    m = mapping.mapping(read(p))
    assert m.iterations == 2 and m.moved_leaves == []
    text = mapping.describe(m)
    assert not any("one iteration" in line for line in text)
    assert any("no two consecutive iterations of the 2 share a leaf's spawn path" in line for line in text)


@pytest.mark.skipif("ROOST_BENCH" not in os.environ, reason="needs the built roost-bench (run through ctest)")
def test_adws_without_stealing_maps_every_iteration_the_same(tmp_path):
    from roost_tools import mapping
    # With balanced hints and no stealing, ADWS's mapping is a function of the hints alone (seed 003 §4.2):
    # not one task may change worker between iterations, and both workers get leaves.
    trace = tmp_path / "adws.trace"
    # The same tasks recorded every iteration: a fixed depth, not auto's (which follows what records cost).
    env = dict(os.environ, ROOST_TRACE=str(trace), ROOST_ADWS_STEAL="false", ROOST_TRACE_DEPTH="all")
    subprocess.run([os.environ["ROOST_BENCH"], "--bench", "heat2d", "--size", "258x6", "--variants", "adws",
                    "--workers", "2", "--reps", "1", "--warmup", "0"], check=True, capture_output=True, timeout=120, env=env)
    m = mapping.mapping(read(trace))
    assert m.iterations == 6 and m.leaves_per_iteration == 16
    assert m.moved_tasks == [0.0] * 5
    assert m.leaves_per_worker == [8.0, 8.0]
    assert m.steals_per_iteration == 0


def test_a_task_that_moved_has_a_piece_on_each_worker_it_ran_on(tmp_path):
    # Root 1 runs T (2) on worker 0, which runs its child A (3) first; worker 1 takes T's continuation and runs
    # it from 3 to 50, then looks for work (T waits for A); A ends at 80 and T goes on on worker 0 to its end
    # at 82. Only the piece on the worker T ended on was drawn: worker 1 looked blank for 47 ns of T's work
    # (an outside-user campaign). A memory record on worker 1 belongs to T's piece there.
    recs = [(0, 1, 0, 0, 1, 0),
            (1, 2, 1, 0, 1, 0), (2, 3, 2, 0, 1, 0),
            (3, 2, 0, 0, 3, 1), (4, 64, 640, 0, 16, 1), (50, 0, 0, 0, 14, 1),
            (80, 3, 0, 0, 2, 0), (81, 2, 0, 0, 3, 0), (82, 2, 0, 0, 2, 0), (90, 1, 0, 0, 2, 0)]
    p = tmp_path / "moved.trace"
    _synthetic(p, 2, recs)
    spans = sorted((w, s, e, lines) for w, s, e, _, lines, _, _ in timeline.task_memory(read(p)))
    assert spans == [(0, 1, 82, 0), (0, 2, 80, 0), (1, 3, 50, 64)]
    # A piece left open by a trace cut short ends at its worker's last record.
    _synthetic(p, 2, recs[:5])
    spans = sorted((w, s, e) for w, s, e, *_ in timeline.task_memory(read(p)))
    assert spans == [(0, 1, 2), (0, 2, 2), (1, 3, 4)]


def test_task_memory_sums_each_tasks_memory_records_and_plots_latency(tmp_path):
    # Worker 0: root 1 runs A (2), whose touches cost 64 lines in 640 ns (32 remote), then B (3): 64 lines in
    # 128 ns. A memory record between tasks belongs to the root, still running. Worker 1: C (4), no touches.
    recs = [(0, 1, 0, 0, 1, 0),
            (1, 2, 1, 0, 1, 0), (2, 64, 640, 32, 16, 0), (3, 2, 0, 0, 2, 0),
            (4, 16, 1000, 0, 16, 0),
            (5, 3, 1, 1, 1, 0), (6, 64, 128, 0, 16, 0), (7, 3, 0, 0, 2, 0),
            (2, 4, 1, 2, 1, 1), (8, 4, 0, 0, 2, 1), (9, 1, 0, 0, 2, 0)]
    p = tmp_path / "mem.trace"
    _synthetic(p, 2, recs)
    t = read(p)
    with_roots = timeline.task_memory(t, roots=True)
    spans = {(w, s): (lines, ns, remote) for w, s, e, sub, lines, ns, remote in with_roots}
    assert spans[(0, 1)] == (64, 640, 32)     # A
    assert spans[(0, 5)] == (64, 128, 0)      # B
    assert spans[(1, 2)] == (0, 0, 0)         # C
    assert spans[(0, 0)] == (16, 1000, 0)     # the root, between its children
    assert with_roots[0][:2] == (0, 0)        # the root first: a drawing puts its children over it
    assert sorted(timeline.latency_per_line(with_roots)) == [2.0, 10.0, 62.5]
    # Without roots (the default; row 002-fig8's statistics): a run's root spans the whole run.
    assert sorted(timeline.latency_per_line(timeline.task_memory(t))) == [2.0, 10.0]
    assert len(timeline.task_spans(t)) == 3
    png = timeline.plot_panels([("a", t), ("b", t)], tmp_path / "fig8.png", colour="latency")
    assert png.stat().st_size > 0
    # C, which touched nothing, is an outlined white bar: it was drawn in the light grey of a sleeping worker.
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import Normalize, to_rgba
    fig, ax = plt.subplots()
    timeline._draw(ax, t, timeline.task_memory(t, roots=True), "latency", Normalize(2.0, 62.5), plt.get_cmap("viridis"))
    tasks = _task_bars(ax)
    assert len(tasks) == 4
    no_data = [b for b in tasks if b[1] == to_rgba("white")]
    assert len(no_data) == 1 and no_data[0][0] == pytest.approx(1 - 0.4)  # worker 1's C
    assert no_data[0][2] == to_rgba(timeline.NO_DATA_EDGE)
    assert not any(b[1] == to_rgba("lightgrey") for b in tasks)
    plt.close(fig)
    assert analyze.main(["timeline", str(p), "--out", str(tmp_path / "one.png"), "--colour", "latency"]) == 0
    # A run whose root alone touched data is coloured by it, not refused.
    _synthetic(p, 1, [(0, 1, 0, 0, 1, 0), (1, 64, 640, 0, 16, 0), (2, 1, 0, 0, 2, 0)])
    assert analyze.main(["timeline", str(p), "--out", str(tmp_path / "root.png"), "--colour", "latency"]) == 0
    fig, ax = plt.subplots()
    spans = [s for _, t1 in [("a", read(p))] for s in timeline.task_memory(t1, roots=True)]
    timeline._draw(ax, read(p), spans, "latency", Normalize(1.0, 20.0), plt.get_cmap("viridis"))
    assert [b[1] for b in _task_bars(ax)] == [plt.get_cmap("viridis")(Normalize(1.0, 20.0)(10.0))]
    plt.close(fig)
    # A trace without memory records (a native run) has nothing to colour by latency.
    _synthetic(p, 1, [(0, 1, 0, 0, 1, 0), (1, 1, 0, 0, 2, 0)])
    with pytest.raises(ValueError, match="no memory records"):
        timeline.plot(read(p), tmp_path / "none.png", colour="latency")
    with pytest.raises(ValueError, match="must be subtree or latency"):
        timeline.plot(read(p), tmp_path / "none.png", colour="rainbow")


def test_timeline_leaves_out_only_bars_that_change_no_pixel(tmp_path):
    # Worker 0: the root 1 [0, 20]; its child A (2) [1, 19], subtree 0; A's child A1 (3) [2, 5] lies inside A in
    # A's colour: left out. B (4), the root's child in subtree 1, [6, 9], drawn over A; A's child A3 (5) [7, 8]
    # lies inside A but under B's colour where it starts: drawn. A's child A2 (6) [10, 12], over A alone again:
    # left out. Worker 1: C (7), A's child run there [3, 8], and C's child C1 (8) [4, 5]: left out.
    recs = [(0, 1, 0, 0, 1, 0),
            (1, 2, 1, 0, 1, 0), (2, 3, 2, 0, 1, 0), (5, 3, 0, 0, 2, 0),
            (6, 4, 1, 1, 1, 0), (7, 5, 2, 1, 1, 0), (8, 5, 0, 0, 2, 0), (9, 4, 0, 0, 2, 0),
            (10, 6, 2, 2, 1, 0), (12, 6, 0, 0, 2, 0),
            (19, 2, 0, 0, 2, 0), (20, 1, 0, 0, 2, 0),
            (3, 7, 2, 3, 1, 1), (4, 8, 7, 0, 1, 1), (5, 8, 0, 0, 2, 1), (8, 7, 0, 0, 2, 1)]
    p = tmp_path / "nested.trace"
    _synthetic(p, 2, recs)
    t = read(p)
    spans = timeline.task_memory(t, roots=True)
    assert len(spans) == 8
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots()
    timeline._draw(ax, t, spans, "subtree")
    drawn = [(round(bottom + 0.4), face) for bottom, face, _ in _task_bars(ax)]
    plt.close(fig)
    a, b = plt.get_cmap("tab20")(0), plt.get_cmap("tab20")(1)
    black = (0.0, 0.0, 0.0, 1.0)
    # In drawing order (by start): the root, A, C, B, A3.
    assert drawn == [(0, black), (0, a), (1, a), (0, b), (0, a)], drawn
    # No subtree is drawn in a grey, the colour of a sleeping worker (an outside-user campaign): the 15th and
    # 16th subtrees were tab20's two greys. Spans of 20 subtrees, one each, side by side on one worker.
    fig, ax = plt.subplots()
    timeline._draw(ax, t, [(0, 10 * k, 10 * k + 5, k, 0, 0, None) for k in range(20)], "subtree")
    faces = [face for _, face, _ in _task_bars(ax)]
    plt.close(fig)
    states_like = {tuple(plt.get_cmap("tab20")(i)) for i in (14, 15, 16, 17)}  # greys, olive, khaki
    assert len(faces) == 20 and not states_like & set(faces), faces
    # Outlined bars are all drawn: latency's tasks without data are white with an edge, whose lines inside the
    # bar under them are pixels of their own (a review found 638 pixels gone on two such bars).
    from matplotlib.colors import Normalize
    fig, ax = plt.subplots()
    timeline._draw(ax, t, spans, "latency", Normalize(0.0, 1.0), plt.get_cmap("viridis"))
    assert len(_task_bars(ax)) == 8
    plt.close(fig)


def _task_bars(ax):
    """The task bars _draw drew (one collection, bars 0.8 high), in drawing order: (bottom, face, edge)."""
    out = []
    for c in ax.collections:
        faces, edges = c.get_facecolors(), c.get_edgecolors()
        for i, path in enumerate(c.get_paths()):
            ys = path.vertices[:, 1]
            if abs((ys.max() - ys.min()) - 0.8) < 1e-9:
                out.append((ys.min(), tuple(faces[i % len(faces)]), tuple(edges[i % len(edges)])))
    return out


def test_a_chunk_written_before_the_traces_start_is_a_damaged_file(tmp_path):
    # A damaged start_ns (bytes 16-23) made the times of every record wrap, and ovr failed with an IndexError
    # (an outside-user campaign); summary, krd and mapping printed figures from it.
    p = tmp_path / "damaged.trace"
    _write_file(p, 1, [(0, (100, 1000), [(0, 1, 0, 0, 1), (1, 1, 0, 0, 2)])], start=(0, 2**40))
    with pytest.raises(TraceError, match=r"damaged: the chunk at byte \d+ was written at 1000 ns, before the "
                                          r"trace's start at 1099511627776 ns \(bytes 16-23\)"):
        read(p)
    _write_file(p, 1, [(0, (100, 1000), [(0, 1, 0, 0, 1), (1, 1, 0, 0, 2)])], start=(0, 10))
    assert len(read(p).records) == 2


def test_latency_colouring_draws_a_parent_under_the_children_it_ran(tmp_path):
    # Root 1 runs P (2), which touches nothing and runs C (3), whose touches cost 64 lines in 640 ns. P's piece
    # ends after C's, and was drawn after it: a white bar over every coloured leaf of a recursion.
    recs = [(0, 1, 0, 0, 1, 0), (1, 2, 1, 0, 1, 0), (2, 3, 2, 0, 1, 0), (3, 64, 640, 0, 16, 0),
            (4, 3, 0, 0, 2, 0), (5, 2, 0, 0, 2, 0), (6, 1, 0, 0, 2, 0)]
    p = tmp_path / "nested.trace"
    _synthetic(p, 1, recs)
    t = read(p)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import Normalize, to_rgba
    fig, ax = plt.subplots()
    timeline._draw(ax, t, timeline.task_memory(t), "latency", Normalize(1.0, 20.0), plt.get_cmap("viridis"))
    tasks = _task_bars(ax)
    assert [b[1] == to_rgba("white") for b in tasks] == [True, False]  # P, then C over it
    plt.close(fig)


def test_damaged_parent_links_are_an_error_not_a_hang(tmp_path, hang_bound):
    # Tasks 2 and 3 name each other as their spawner: only a damaged file can say that. mapping followed the
    # chain for ever, growing it until memory ran out.
    from roost_tools import mapping
    p = tmp_path / "loop.trace"
    _synthetic(p, 1, [(0, 0, 0, 0, 7, 0xFFFF), (9, 0, 0, 0, 8, 0xFFFF),
                      (0, 1, 0, 0, 1, 0), (1, 2, 3, 0, 1, 0), (2, 3, 2, 0, 1, 0)])
    with pytest.raises(TraceError, match="its own ancestor"):
        mapping.mapping(read(p))
    assert analyze.main(["mapping", str(p)]) == 2
    # timeline and markdown name each ended task's subtree by walking up the same links: they looped for ever
    _synthetic(p, 1, [(0, 0, 0, 0, 7, 0xFFFF), (9, 0, 0, 0, 8, 0xFFFF), (0, 1, 0, 0, 1, 0), (1, 2, 3, 0, 1, 0),
                      (2, 3, 2, 0, 1, 0), (3, 3, 0, 0, 2, 0), (4, 2, 0, 0, 2, 0), (5, 1, 0, 0, 2, 0)])
    with pytest.raises(TraceError, match="its own ancestor"):
        timeline.task_spans(read(p))
    assert analyze.main(["timeline", str(p), "--out", str(tmp_path / "t.png")]) == 2
    assert analyze.main(["markdown", str(p), "--name", "x", "--out-dir", str(tmp_path)]) == 2
    # A task that names itself
    _synthetic(p, 1, [(0, 0, 0, 0, 7, 0xFFFF), (9, 0, 0, 0, 8, 0xFFFF), (0, 1, 0, 0, 1, 0), (1, 2, 2, 0, 1, 0),
                      (2, 2, 0, 0, 2, 0), (3, 1, 0, 0, 2, 0)])
    with pytest.raises(TraceError, match="its own ancestor"):
        timeline.task_spans(read(p))


def test_work_begins_with_a_workers_first_task_and_ends_where_it_enters_its_loop_after_its_last(tmp_path):
    # As the engine writes them: the caller's thread is worker 0, outside its loop, from run()'s start to the
    # root's begin, and after the root's end it enters its loop (idle_begin) and leaves it (idle_end) before
    # run() returns. Records: (t, a, b, index, kind, lane); 14/15 idle begin/end.
    from roost_tools import ovr
    one = tmp_path / "one.trace"
    # Run 0-100: the root 30-90. Run 200-300: the root 200-280, a nested child 210-250 (its end the worker's
    # latest task record; the root computes on after it).
    _synthetic(one, 1, [(0, 0, 0, 0, 7, 0xFFFF), (100, 0, 0, 0, 8, 0xFFFF), (200, 0, 0, 0, 7, 0xFFFF),
                        (300, 0, 0, 0, 8, 0xFFFF),
                        (30, 1, 0, 0, 1, 0), (90, 1, 0, 0, 2, 0), (91, 0, 0, 0, 14, 0), (92, 0, 0, 0, 15, 0),
                        (200, 2, 0, 0, 1, 0), (210, 3, 2, 0, 1, 0), (250, 3, 0, 0, 2, 0), (280, 2, 0, 0, 2, 0),
                        (281, 0, 0, 0, 14, 0), (282, 0, 0, 0, 15, 0)])
    assert ovr.work_time(read(one)) == 61 + 81  # run()'s own launch and return are overhead (OVR_1)
    assert ovr.decompose(read(one), read(one)).ovr_1 == pytest.approx(200 / 142)
    # 2 workers. Run 0-100: worker 0 begins the root, which waits at its join from 20 (the loop) and is
    # resumed on worker 1, where it ends; worker 0 leaves its loop at 95 as run() ends: its last task record
    # is the root's begin, and its work ends where it entered the loop (20), not at the run's end. Run
    # 200-300: worker 1 steals T at 210, which runs a nested child 212-215 (recorded), computes on and
    # suspends at 230 (worker 1 enters its loop); worker 0 resumes T at 232 and ends it at 235. Worker 1's work
    # there ends at 230, not at its last record (the child's end at 215).
    two = tmp_path / "two.trace"
    _synthetic(two, 2, [(0, 0, 0, 0, 7, 0xFFFF), (100, 0, 0, 0, 8, 0xFFFF), (200, 0, 0, 0, 7, 0xFFFF),
                        (300, 0, 0, 0, 8, 0xFFFF),
                        (0, 1, 0, 0, 1, 0), (20, 0, 0, 0, 14, 0), (95, 0, 0, 0, 15, 0),
                        (0, 0, 0, 0, 14, 1), (40, 0, 0, 0, 15, 1), (40, 1, 0, 0, 3, 1), (60, 1, 0, 0, 2, 1),
                        (60, 0, 0, 0, 14, 1),
                        (200, 2, 0, 0, 1, 0), (220, 0, 0, 0, 14, 0), (232, 0, 0, 0, 15, 0), (232, 4, 0, 0, 3, 0),
                        (235, 4, 0, 0, 2, 0), (235, 0, 0, 0, 14, 0), (240, 0, 0, 0, 15, 0), (240, 2, 0, 0, 3, 0),
                        (260, 2, 0, 0, 2, 0), (261, 0, 0, 0, 14, 0), (290, 0, 0, 0, 15, 0),
                        (210, 0, 0, 0, 15, 1), (210, 4, 2, 0, 1, 1), (212, 5, 4, 0, 1, 1), (215, 5, 0, 0, 2, 1),
                        (230, 0, 0, 0, 14, 1)])
    assert ovr.work_time(read(two)) == (20 + 20) + (61 - 12 - 5) + 20


def test_touching_iterations_are_measured_apart(tmp_path):
    from roost_tools import ovr
    # Virtual time: run 1 is 0-100 and run 2 begins at its end, 100-200. Worker 0's root of run 1 ends at 100;
    # run 2's launch takes 100-110 and its root runs 110-200. Worker 1 leaves its loop at 130 and begins a task
    # at 140, which ends at 160. Merged as one interval, the launch and worker 1's way from its loop to its
    # task (130-140) counted as work, and with --skip 1 the root's end at 100 was taken as run 2's first task
    # record (an outside-user campaign).
    p = tmp_path / "touch.trace"
    _synthetic(p, 2, [(0, 0, 0, 0, 7, 0xFFFF), (100, 0, 0, 0, 8, 0xFFFF), (100, 0, 0, 0, 7, 0xFFFF),
                      (200, 0, 0, 0, 8, 0xFFFF),
                      (0, 1, 0, 0, 1, 0), (100, 1, 0, 0, 2, 0), (110, 2, 0, 0, 1, 0), (200, 2, 0, 0, 2, 0),
                      (0, 0, 0, 0, 14, 1), (130, 0, 0, 0, 15, 1), (140, 3, 2, 0, 1, 1), (160, 3, 0, 0, 2, 1),
                      (160, 0, 0, 0, 14, 1)])
    t = read(p)
    assert ovr.work_time(t) == 100 + 90 + 20
    assert ovr.work_time(t, skip=1) == 90 + 20


def test_ovr_without_work_is_an_error_not_a_division_by_zero(tmp_path, capsys):
    from roost_tools import ovr
    # A simulated run whose every cost is 0 ns: its iterations and tasks last no time.
    p = tmp_path / "zero.trace"
    _synthetic(p, 1, [(0, 0, 0, 0, 7, 0xFFFF), (0, 0, 0, 0, 8, 0xFFFF), (0, 1, 0, 0, 1, 0), (0, 1, 0, 0, 2, 0)])
    with pytest.raises(ValueError, match="the trace's iterations hold no work"):
        ovr.decompose(read(p), read(p))
    capsys.readouterr()
    assert analyze.main(["ovr", str(p), str(p)]) == 2
    err = capsys.readouterr().err
    assert "hold no work" in err and "Traceback" not in err


def test_ovr_of_a_trace_cut_before_its_iteration_records_says_so(tmp_path, capsys):
    from roost_tools import ovr
    # A program killed before destroying its runtime: its workers' task records, no end chunk, and none of the
    # runtime lane's iteration records, which the runtime writes when destroyed (an outside-user campaign: ovr
    # said the trace had no iteration while mapping counted three).
    p = tmp_path / "killed.trace"
    _write_file(p, 1, [(0, (10, 10), [(0, 0, 0, 0, 1, 0), (5, 0, 0, 0, 2, 0)])], end=False)
    with pytest.raises(ValueError, match="cut short .* before its runtime wrote its iteration records"):
        ovr.iterations(read(p))
    capsys.readouterr()
    assert analyze.main(["ovr", str(p), str(p)]) == 2
    err = capsys.readouterr().err
    assert "iteration records" in err and "Traceback" not in err


def test_krd_says_when_the_trace_describes_no_cache_sizes(tmp_path, capsys):
    p = tmp_path / "nocache.trace"
    touches = [(0, 0, 0, 0, 7, 0xFFFF), (9, 0, 0, 0, 8, 0xFFFF), (0, 1, 0, 0, 1, 0),
               (1, 4096, 64, 0, 4, 0), (2, 8192, 64, 0, 4, 0), (3, 4096, 64, 0, 4, 0), (4, 1, 0, 0, 2, 0)]
    _synthetic(p, 1, touches, caches=(0, 0))
    assert analyze.main(["krd", str(p)]) == 0
    assert "describes no cache sizes" in capsys.readouterr().err
    # Every reuse far, as said: a reuse of the block touched last (distance 0) was counted close.
    touches.insert(-1, (3, 4096, 64, 0, 4, 0))
    _synthetic(p, 1, touches, caches=(0, 0))
    h = krd.krd(read(p))["all"]
    assert (h.close, h.near, h.far, h.cold) == (0, 0, 2, 2)
    capsys.readouterr()
    _synthetic(p, 1, touches)  # with sizes: no such word
    assert analyze.main(["krd", str(p)]) == 0
    assert "no cache sizes" not in capsys.readouterr().err


def test_krd_says_when_the_trace_holds_no_kernel_accesses(tmp_path, capsys):
    # A trace without roost::touch records gave a KRD of zeros and no word (an outside-user campaign).
    p = tmp_path / "notouch.trace"
    _synthetic(p, 1, [(0, 0, 0, 0, 7, 0xFFFF), (9, 0, 0, 0, 8, 0xFFFF)])
    assert analyze.main(["krd", str(p)]) == 0
    assert "holds no kernel accesses" in capsys.readouterr().err
    # markdown says it on stderr and in its section, whose table is zeros.
    assert analyze.main(["markdown", str(p), "--name", "none", "--out-dir", str(tmp_path)]) == 0
    out = capsys.readouterr()
    assert "holds no kernel accesses" in out.err and "*No task called `roost::touch`" in out.out
    _synthetic(p, 1, [(0, 0, 0, 0, 7, 0xFFFF), (1, 4096, 64, 0, 4, 0), (9, 0, 0, 0, 8, 0xFFFF)])
    assert analyze.main(["krd", str(p)]) == 0
    assert "no kernel accesses" not in capsys.readouterr().err
    assert analyze.main(["markdown", str(p), "--name", "some", "--out-dir", str(tmp_path)]) == 0
    assert "No task called" not in capsys.readouterr().out


def test_records_and_headers_roost_cannot_write_are_damage(tmp_path):
    # Each was read without a word, and the subcommands then disagreed, or a header's worker count of 70,000
    # took timeline minutes and gigabytes (an outside-user campaign).
    p = tmp_path / "t.trace"
    for workers in (0, 4097, 70000):
        _write_file(p, workers, [])
        with pytest.raises(TraceError, match=f"the header says {workers} workers; roost writes 1 to 4096"):
            read(p)
    _write_file(p, 2, [], domains=[0, 2])
    with pytest.raises(TraceError, match="worker 1's cache domain is 2; a trace of 2 workers numbers its domains 0 to 1"):
        read(p)
    cases = [([(1, 4096, 64, 9, 4, 0)], 4, "a touch of mode 9 in lane 0"),
             ([(1, 0, 64, 0, 4, 0)], 4, "a touch of 64 bytes at 0x0, which roost::touch refuses"),
             ([(1, 2**64 - 64, 64, 1, 4, 0)], 4, "which roost::touch refuses"),
             ([(1, 3, 0, 0, 13, 0)], 4, "a steal record with b = 0; version 4 writes b = 1"),
             ([(1, 0, 0, 0, 8, 0xFFFF), (2, 0, 0, 0, 7, 0xFFFF)], 6, "do not alternate")]
    for records, version, why in cases:
        lanes = sorted({r[5] for r in records})
        _write_file(p, 1, [(lane, (5, 5), [r for r in records if r[5] == lane]) for lane in lanes], version=version)
        with pytest.raises(TraceError, match=why):
            read(p)
    # What the runtime does write stays readable: an empty touch at a null base (older traces), a touch ending
    # one byte short of the address space's end, a run cut short on its last iteration_begin.
    _write_file(p, 1, [(0, (5, 5), [(1, 0, 0, 0, 4, 0), (2, 2**64 - 65, 64, 2, 4, 0)]),
                       (0xFFFF, (5, 5), [(1, 0, 0, 0, 7, 0xFFFF), (2, 0, 0, 0, 8, 0xFFFF), (3, 0, 0, 0, 7, 0xFFFF)])],
                version=6)
    assert len(read(p).records) == 5


def test_krd_counts_no_empty_region(tmp_path):
    # A touch of 0 bytes (an empty vector's touch(nullptr, 0), recorded by roost before it stopped recording
    # them) names no byte: it was counted as an access, here a close reuse of base 0 (an outside-user campaign).
    p = tmp_path / "empty.trace"
    touches = [(0, 0, 0, 0, 7, 0xFFFF), (9, 0, 0, 0, 8, 0xFFFF), (0, 1, 0, 0, 1, 0),
               (1, 4096, 64, 0, 4, 0), (2, 0, 0, 0, 4, 0), (3, 8192, 64, 0, 4, 0), (4, 0, 0, 0, 4, 0),
               (5, 4096, 64, 0, 4, 0), (6, 1, 0, 0, 2, 0)]
    _synthetic(p, 1, touches)
    t = read(p)
    assert len(krd.accesses(t)) == 3
    h = krd.krd(t)["all"]
    assert (h.close, h.near, h.far, h.cold) == (1, 0, 0, 2)


def test_a_named_pipe_is_refused_not_waited_on(tmp_path, capsys, hang_bound):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert analyze.main(["summary", str(fifo)]) == 2
    assert "not a regular file" in capsys.readouterr().err


def test_ovr_refuses_a_reference_of_another_program_and_bad_skips(tmp_path):
    from roost_tools import ovr
    def runs(path, workers, n):
        recs = []
        for i in range(n):
            recs += [(100 * i, 0, 0, 0, 7, 0xFFFF), (100 * i + 50, 0, 0, 0, 8, 0xFFFF)]
        recs += [(100 * i, 10 + i, 0, 0, 1, 0) for i in range(n)]
        _synthetic(path, workers, recs)
        return read(path)
    three, four_1 = runs(tmp_path / "a.trace", 2, 3), runs(tmp_path / "b.trace", 1, 4)
    with pytest.raises(ValueError, match="3 and 4 iterations"):
        ovr.decompose(three, four_1)
    three_1 = runs(tmp_path / "c.trace", 1, 3)
    assert ovr.decompose(three, three_1).t_n == 150
    with pytest.raises(ValueError, match="must be 0 or more"):
        ovr.decompose(three, three_1, skip=-1)
    # Traces of two programs with as many iterations: one declares data, the other none (fib against heat2d
    # gave a WTI_N of 11.6 without a word: an outside-user campaign).
    recs = [(100 * i + 5, 0x10000, 4096, 0, 4, 0) for i in range(3)]
    _synthetic(tmp_path / "d.trace", 1, [(100 * i, 0, 0, 0, 7, 0xFFFF) for i in range(3)] +
               [(100 * i + 50, 0, 0, 0, 8, 0xFFFF) for i in range(3)] + [(100 * i, 10 + i, 0, 0, 1, 0) for i in range(3)] +
               recs)
    touching_1 = read(tmp_path / "d.trace")
    with pytest.raises(ValueError, match="the reference touches 12288 bytes in all .* and the trace none"):
        ovr.decompose(three, touching_1)
    _synthetic(tmp_path / "e.trace", 2, [(100 * i, 0, 0, 0, 7, 0xFFFF) for i in range(3)] +
               [(100 * i + 50, 0, 0, 0, 8, 0xFFFF) for i in range(3)] + [(100 * i, 10 + i, 0, 0, 1, 0) for i in range(3)] +
               [(100 * i + 5, 0x10000, 2048, 1, 4, i % 2) for i in range(3)])
    touching_2 = read(tmp_path / "e.trace")
    assert ovr.decompose(touching_2, touching_1).t_n == 150  # both touch, amounts apart: the same program may
    with pytest.raises(ValueError, match="the trace touches 6144 bytes in all .* and the reference none"):
        ovr.decompose(touching_2, three_1)
    none = tmp_path / "none.trace"
    _synthetic(none, 1, [])
    with pytest.raises(ValueError, match="no iteration"):
        ovr.iterations(read(none))
    from roost_tools import mapping
    assert any("no iteration" in line for line in mapping.describe(mapping.mapping(read(none))))


@pytest.mark.skipif("ROOST_BENCH" not in os.environ, reason="needs the built roost-bench (run through ctest)")
def test_ovr_refuses_to_set_a_simulated_trace_against_a_native_one(tmp_path, capsys):
    from roost_tools import ovr
    def traced(name, workers, platform=()):
        path = tmp_path / name
        subprocess.run([os.environ["ROOST_BENCH"], "--bench", "fib", "--size", "12", "--variants", "ws", "--workers",
                        str(workers), "--reps", "2", "--warmup", "0", *platform], check=True, capture_output=True,
                       timeout=120, env=dict(os.environ, ROOST_TRACE=str(path)))
        return read(path)
    sim = ("--platform", "sim", "--topology", "pack:1 l3:1(size=1MiB) core:2 pu:1")
    native_1, native_2 = traced("n1.trace", 1), traced("n2.trace", 2)
    sim_1, sim_2 = traced("s1.trace", 1, sim), traced("s2.trace", 2, sim)
    assert sim_2.simulated and sim_1.simulated and not native_1.simulated and not native_2.simulated
    assert sim_2.topology.startswith("simulated: ")
    ovr.decompose(sim_2, sim_1)  # the same platform: fine
    ovr.decompose(native_2, native_1)
    with pytest.raises(ValueError, match="the trace is of a simulated run .* the reference of a native one"):
        ovr.decompose(sim_2, native_1)
    with pytest.raises(ValueError, match="the reference is of a simulated run .* the trace of a native one"):
        ovr.decompose(native_2, sim_1)
    # Another simulated machine's reference was taken without a word (an outside-user campaign).
    other_1 = traced("o1.trace", 1, ("--platform", "sim", "--topology", "pack:1 l3:1(size=2MiB) core:1 pu:1"))
    with pytest.raises(ValueError, match="the reference must run on the same simulated machine"):
        ovr.decompose(sim_2, other_1)
    # Errors about one of the two files name it (an empty one was "the trace" whichever it was).
    empty = tmp_path / "empty.trace"
    _synthetic(empty, 1, [])
    assert analyze.main(["ovr", str(tmp_path / "n2.trace"), str(empty)]) == 2
    assert f"TRACE_1 {empty}: the trace has no iteration" in capsys.readouterr().err


def test_analyze_reports_bad_output_paths_and_options_without_a_traceback(tmp_path, capsys, monkeypatch):
    p = tmp_path / "t.trace"
    _synthetic(p, 1, [(0, 0, 0, 0, 7, 0xFFFF), (9, 0, 0, 0, 8, 0xFFFF), (0, 1, 0, 0, 1, 0)])
    cases = [(["timeline", str(p), "--out", str(tmp_path / "missing" / "t.png")], "does not exist"),
             (["timeline", str(p), "--out", str(tmp_path)], "a directory"),
             (["timeline", str(p), "--out", str(tmp_path / "t.xyz")], "no 'xyz' images"),
             (["timeline", str(p), "--out", str(tmp_path / "t.png"), "--colour", "latency"], "simulated trace"),
             (["markdown", str(p), "--name", "x", "--out-dir", str(tmp_path / "missing")], "not an existing directory"),
             # An empty --out was called a directory, and a device got a file beside it: --out /dev/full wrote
             # /dev/full.png (an outside-user campaign).
             (["timeline", str(p), "--out", ""], "--out '': empty"),
             (["timeline", str(p), "--out", "/dev/null"], "not a regular file")]
    for argv, why in cases:
        capsys.readouterr()
        assert analyze.main(argv) == 2, argv
        err = capsys.readouterr().err
        assert why in err and err.startswith("roost-analyze: "), (argv, err)
    # The image may not be the trace itself: `timeline run.png --out run.png` overwrote its own trace (an
    # outside-user campaign), and markdown's NAME-timeline.png or NAME-krd.png in --out-dir likewise.
    png_trace = tmp_path / "run.png"
    png_trace.write_bytes(p.read_bytes())
    for argv in (["timeline", str(png_trace), "--out", str(png_trace)],
                 ["timeline", str(png_trace), "--out", str(tmp_path / "run")],
                 ["markdown", str(png_trace), "--name", "run", "--out-dir", str(tmp_path)]):
        if argv[0] == "markdown":
            png_trace.rename(tmp_path / "run-krd.png")
            png_trace = tmp_path / "run-krd.png"
            argv[1] = str(png_trace)
        capsys.readouterr()
        assert analyze.main(argv) == 2, argv
        assert "is the trace being read" in capsys.readouterr().err, argv
        assert png_trace.read_bytes() == p.read_bytes(), argv
    assert not Path("/dev/null.png").exists()
    # An option given twice ran with the last one without a word (an outside-user campaign); argparse's usage
    # error, exit status 2.
    for argv in (["timeline", str(p), "--out", str(tmp_path / "a.png"), "--out", str(tmp_path / "b.png")],
                 ["ovr", str(p), str(p), "--skip", "0", "--skip", "0"],
                 ["markdown", str(p), "--name", "x", "--name", "y", "--out-dir", str(tmp_path)]):
        capsys.readouterr()
        with pytest.raises(SystemExit) as exited:
            analyze.main(argv)
        assert exited.value.code == 2 and "is given twice; give it once" in capsys.readouterr().err, argv
    # pgf without its TeX system: matplotlib listed it and then failed in savefig, with a traceback of 35 frames
    # (an outside-user campaign). Refused up front, and left out of the formats named.
    import shutil

    real_which = shutil.which
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None if "tex" in name else real_which(name, *a, **k))
    capsys.readouterr()
    assert analyze.main(["timeline", str(p), "--out", str(tmp_path / "t.pgf")]) == 2
    err = capsys.readouterr().err
    assert "writes pgf through xelatex (LaTeX), which is not installed" in err and "pgf," not in err, err
    assert not (tmp_path / "t.pgf").exists()
    assert analyze.main(["timeline", str(p), "--out", str(tmp_path / "t.xyz")]) == 2
    assert "pgf" not in capsys.readouterr().err
    monkeypatch.undo()
    # No suffix: the PNG matplotlib writes, under the name it has.
    assert analyze.main(["timeline", str(p), "--out", str(tmp_path / "plain")]) == 0
    assert f"wrote {tmp_path / 'plain.png'}" in capsys.readouterr().out
    assert (tmp_path / "plain.png").is_file()


def test_analyze_into_a_closed_pipe_exits_quietly(tmp_path):
    import sys
    p = tmp_path / "t.trace"
    _synthetic(p, 1, [(0, 0, 0, 0, 7, 0xFFFF), (9, 0, 0, 0, 8, 0xFFFF), (0, 1, 0, 0, 1, 0)])
    proc = subprocess.Popen([sys.executable, "-m", "roost_tools.analyze", "summary", str(p)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=Path(__file__).parent.parent)
    proc.stdout.close()  # the reader is gone before the first line (head -1 stops after one)
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert "Traceback" not in err and "Error" not in err, err


def test_analyze_names_the_argument_of_a_bad_trace_path_or_image_name(tmp_path, capsys, monkeypatch):
    # Each printed a raw "[Errno 21] Is a directory", "[Errno 2] ... md/a/b-timeline.png", or wrote "-krd.png".
    p = tmp_path / "t.trace"
    _synthetic(p, 1, [(0, 0, 0, 0, 7, 0xFFFF), (9, 0, 0, 0, 8, 0xFFFF), (0, 1, 0, 0, 1, 0)])
    md = tmp_path / "md"
    md.mkdir()
    monkeypatch.chdir(tmp_path)
    cases = [(["summary", str(tmp_path)], f"TRACE {tmp_path}: a directory; give a trace file"),
             (["krd", "."], "TRACE .: a directory; give a trace file"),
             (["summary", "nope.trace"], "TRACE nope.trace: no such file"),
             (["ovr", str(p), "md"], "TRACE_1 md: a directory; give a trace file"),
             (["markdown", str(p), "--name", "a/b", "--out-dir", "md"],
              "--name 'a/b': must be a plain file-name stem, non-empty and without '/'"),
             (["markdown", str(p), "--name", "", "--out-dir", "md"],
              "--name '': must be a plain file-name stem, non-empty and without '/'")]
    for argv, why in cases:
        capsys.readouterr()
        assert analyze.main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith(f"roost-analyze: {why}") and err.count("\n") == 1 and "Errno" not in err, (argv, err)
    assert not list(md.iterdir())  # nothing written for a refused name
    with pytest.raises(TraceError, match="a directory, not a trace"):
        read(tmp_path)
    assert analyze.main(["markdown", str(p), "--name", "a.b", "--out-dir", "md"]) == 0
    assert {f.name for f in md.iterdir()} == {"a.b-timeline.png", "a.b-krd.png"}
