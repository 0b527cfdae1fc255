"""The simulator's cache model (src/sim, through roost-cachesim) against pycachesim, an independent simulator.

Both replay the same traces through the same geometry, write-back and write-allocate LRU caches where a miss
is filled into every level it missed (pycachesim's "inclusive" hierarchy), and must agree exactly, level by
level, on hits, misses and write-backs (pycachesim's EVICT). roost-cachesim runs in its pycachesim mode
(src/sim/README.md): there, as in pycachesim, a write that hits neither reorders its set nor counts as a hit,
so pycachesim's HIT is roost's hits - write_hits.

Run through ctest (ROOST_CACHESIM names the built binary); skipped without it.
"""
import json
import pathlib
import os
import random
import subprocess
from pathlib import Path

import pytest

CACHESIM = os.environ.get("ROOST_CACHESIM")
pytestmark = pytest.mark.skipif(not CACHESIM or not Path(CACHESIM).exists(),
                                reason="needs the built roost-cachesim in ROOST_CACHESIM (run through ctest)")

LINE = 64
KiB = 1024
MiB = 1024 * KiB

# Geometries: (size, ways) per level, nearest first.
DIRECT_MAPPED = [(8 * KiB, 1)]
EIGHT_WAY = [(32 * KiB, 8)]
THREE_LEVEL = [(32 * KiB, 8), (256 * KiB, 8), (2 * MiB, 16)]
THREE_LEVEL_SMALL = [(1 * KiB, 2), (4 * KiB, 4), (16 * KiB, 8)]       # evictions at every level, quickly
THREE_LEVEL_ODD_SETS = [(4 * KiB, 4), (48 * KiB, 8), (384 * KiB, 12)]  # 96 and 512 sets: modulo indexing


# ---- traces: lists of (op, address, size) ---------------------------------------------------------------

def random_trace(seed, n, footprint, write_fraction=0.3, size=8):
    rng = random.Random(seed)
    return [("W" if rng.random() < write_fraction else "R", rng.randrange(0, footprint // size) * size, size)
            for _ in range(n)]


def strided_trace(seed, n, stride, span, write_every=3):
    """Sweeps with a fixed stride, repeated: conflict misses for power-of-two strides."""
    rng = random.Random(seed)
    base = rng.randrange(0, 1 << 20) * LINE
    out = []
    i = 0
    while len(out) < n:
        for a in range(0, span, stride):
            out.append(("W" if i % write_every == 0 else "R", base + a, 8))
            i += 1
    return out[:n]


def cyclic_reuse_trace(seed, n, working_set_lines):
    """A loop over a working set: all hits when it fits, all misses under LRU when it is one line too big."""
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        for l in range(working_set_lines):
            out.append(("W" if rng.random() < 0.2 else "R", l * LINE + 16, 8))
    return out[:n]


def hot_cold_trace(seed, n, hot_bytes, cold_bytes):
    """80% of accesses to a hot set, 20% to a large cold one; mixed sizes, some crossing lines."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        hot = rng.random() < 0.8
        addr = rng.randrange(0, hot_bytes if hot else cold_bytes) + (0 if hot else 64 * MiB)
        size = rng.choice([1, 4, 8, 8, 16, 100, 300])
        out.append(("W" if rng.random() < 0.35 else "R", addr, size))
    return out


def streaming_trace(n, footprint, write_every=2):
    """Copy-like: read a line of one array, write the same line of another."""
    out = []
    lines = footprint // LINE
    i = 0
    while len(out) < n:
        out.append(("R", (i % lines) * LINE, LINE))
        if i % write_every == 0:
            out.append(("W", 512 * MiB + (i % lines) * LINE, LINE))
        i += 1
    return out[:n]


def trace_set(levels):
    total = sum(size for size, _ in levels)
    first = levels[0][0]
    return {
        "random-small": random_trace(1, 30000, 2 * first),
        "random-large": random_trace(2, 60000, 4 * total),
        "stride-4KiB": strided_trace(3, 30000, 4096, 64 * 4096),
        "stride-192": strided_trace(4, 30000, 192, 3 * total),
        "cyclic-fits": cyclic_reuse_trace(5, 30000, first // LINE),
        "cyclic-one-too-many": cyclic_reuse_trace(6, 30000, first // LINE + 1),
        "hot-cold": hot_cold_trace(7, 40000, first, 8 * total),
        "streaming": streaming_trace(40000, 2 * total),
    }


# ---- the two simulators --------------------------------------------------------------------------------

def run_roost(levels, trace, tmp_path, mode="pycachesim"):
    path = tmp_path / "trace.txt"
    with open(path, "w") as f:
        for op, addr, size in trace:
            f.write(f"{op} {addr:#x} {size}\n")
    args = [CACHESIM, "--mode", mode, "--trace", str(path)]
    for size, ways in levels:
        args += ["--level", f"size={size},ways={ways}"]
    out = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
    # A geometry with an even number of sets at every level (all of GEOMETRIES) is walked as the simulator walks
    # it, in two shards by line (src/sim/sharded_model.hpp): the agreement with pycachesim holds for them.
    assert out["shards"] == (2 if all((size // (ways * LINE)) % 2 == 0 for size, ways in levels) else 1)
    return out


def run_pycachesim(levels, trace):
    try:
        from cachesim import Cache, CacheSimulator, MainMemory
    except ImportError:
        pytest.fail("pycachesim is not installed in this Python: scripts/bootstrap.sh installs it into .venv")
    caches = []
    below = None
    for i in reversed(range(len(levels))):
        size, ways = levels[i]
        c = Cache(f"L{i + 1}", size // (ways * LINE), ways, LINE, "LRU", write_back=True, write_allocate=True,
                  load_from=below, store_to=below)
        caches.insert(0, c)
        below = c
    mem = MainMemory()
    mem.load_to(caches[-1])
    mem.store_from(caches[-1])
    sim = CacheSimulator(caches[0], mem)
    for op, addr, size in trace:
        if op == "W":
            sim.store(addr, length=size)
        else:
            sim.load(addr, length=size)
    return [c.stats() for c in caches], mem.stats()


def compare(levels, trace, tmp_path):
    roost = run_roost(levels, trace, tmp_path)
    ref, ref_mem = run_pycachesim(levels, trace)
    got = []
    want = []
    for i, (r, p) in enumerate(zip(roost["caches"], ref)):
        got.append({"level": i + 1, "HIT": r["hits"] - r["write_hits"], "MISS": r["misses"], "EVICT": r["writebacks"]})
        want.append({"level": i + 1, "HIT": p["HIT_count"], "MISS": p["MISS_count"], "EVICT": p["EVICT_count"]})
        if i > 0:  # below L1 pycachesim counts one LOAD per line, as roost counts accesses
            got[-1]["LOAD"] = r["accesses"]
            want[-1]["LOAD"] = p["LOAD_count"]
    got.append({"MEM_LOAD": roost["memory"]["local"], "MEM_STORE": roost["memory"]["writebacks"]})
    want.append({"MEM_LOAD": ref_mem["LOAD_count"], "MEM_STORE": ref_mem["STORE_count"]})
    return got, want, roost


# ---- the agreement -------------------------------------------------------------------------------------

GEOMETRIES = {
    "direct-mapped": DIRECT_MAPPED,
    "8-way": EIGHT_WAY,
    "3-level": THREE_LEVEL,
    "3-level-small": THREE_LEVEL_SMALL,
    "3-level-odd-sets": THREE_LEVEL_ODD_SETS,
}


@pytest.mark.parametrize("geometry", list(GEOMETRIES))
def test_counts_agree_exactly_with_pycachesim(geometry, tmp_path):
    levels = GEOMETRIES[geometry]
    for name, trace in trace_set(levels).items():
        got, want, _ = compare(levels, trace, tmp_path)
        assert got == want, f"{geometry}, trace {name}"


def test_the_traces_exercise_every_level(tmp_path):
    # Agreement means something only if every level hits, misses and writes back on the traces used.
    for levels in (THREE_LEVEL, THREE_LEVEL_SMALL):
        seen = {}
        for trace in trace_set(levels).values():
            for i, c in enumerate(run_roost(levels, trace, tmp_path)["caches"]):
                for k in ("hits", "misses", "writebacks"):
                    seen[(i, k)] = seen.get((i, k), 0) + c[k]
        assert all(v > 0 for v in seen.values()), seen


def test_roost_mode_reorders_on_write_hits_and_pycachesim_does_not(tmp_path):
    # One 2-way set: A, B, write A (hit), C. roost makes A most recent, so C replaces B and A hits again;
    # pycachesim leaves A least recent, so C replaces A, which then misses. The modes must differ here.
    levels = [(2 * LINE, 2)]
    trace = [("R", 0, 8), ("R", 64, 8), ("W", 0, 8), ("R", 128, 8), ("R", 0, 8)]
    as_pycachesim = run_roost(levels, trace, tmp_path, mode="pycachesim")["caches"][0]
    as_roost = run_roost(levels, trace, tmp_path, mode="roost")["caches"][0]
    assert (as_pycachesim["hits"], as_pycachesim["misses"]) == (1, 4)  # the write's hit only
    assert (as_roost["hits"], as_roost["misses"]) == (2, 3)
    ref, _ = run_pycachesim(levels, trace)
    assert (ref[0]["HIT_count"], ref[0]["MISS_count"]) == (as_pycachesim["hits"] - as_pycachesim["write_hits"], 4)


def test_bad_parameters_are_named_with_what_is_valid(tmp_path):
    trace = tmp_path / "t.txt"
    trace.write_text("R 0 8\n")
    bad = subprocess.run([CACHESIM, "--level", "size=32KiB,ways=8", "--params", "l1.wayz=4", "--trace", str(trace)],
                         capture_output=True, text=True)
    assert bad.returncode == 2
    assert "unknown parameter 'l1.wayz'" in bad.stderr and "l1.ways" in bad.stderr and "dram.local_ns" in bad.stderr
    odd = subprocess.run([CACHESIM, "--level", "size=1000,ways=8", "--trace", str(trace)], capture_output=True, text=True)
    assert odd.returncode == 2 and "not a whole number of 64 B lines" in odd.stderr
    sets = subprocess.run([CACHESIM, "--level", "size=1024,ways=3", "--trace", str(trace)], capture_output=True, text=True)
    assert sets.returncode == 2 and "not a whole number of sets" in sets.stderr
    no_size = subprocess.run([CACHESIM, "--topology", "pack:2 l3:1 core:1 pu:1", "--trace", str(trace)],
                             capture_output=True, text=True)
    assert no_size.returncode == 2 and "'l3:1' has no size" in no_size.stderr


def test_a_generated_stream_stays_inside_its_footprint():
    """Each PU streams through a part of the footprint of its own: a footprint of fewer lines than --pus gave
    each PU a line anyway, 4 lines touched for a footprint of 1 (an outside-user campaign). Refused now, with
    the least footprint; and the lines a stream touches are the footprint's."""
    topo = "pack:1 l3:1(size=64KiB) core:4 pu:1"
    run = subprocess.run([CACHESIM, "--topology", topo, "--generate", "stream", "--count", "400", "--footprint", "64",
                          "--pus", "4"], capture_output=True, text=True)
    assert run.returncode == 2 and "--footprint 64: 1 line(s) for 4 PUs (--pus)" in run.stderr, run.stderr
    assert "at least 256 bytes" in run.stderr, run.stderr
    out = json.loads(subprocess.run([CACHESIM, "--topology", topo, "--generate", "stream", "--count", "400",
                                     "--footprint", "320", "--pus", "4"], check=True, capture_output=True,
                                    text=True).stdout)
    l3 = [c for c in out["caches"] if c["level"] == 3][0]
    assert l3["misses"] == 4  # 5 lines: one each, the fifth unused (--help says so)
    for args, why in ((["--count", "0"], "--count 0: must be above 0"), ([], "--generate needs --count N"),
                      (["--count", "5", "--footprint", "4"], "--footprint 4: must be at least one line (64 bytes)")):
        run = subprocess.run([CACHESIM, "--topology", topo, "--generate", "stream", *args], capture_output=True, text=True)
        assert run.returncode == 2 and why in run.stderr, (args, run.stderr)


def test_distances_below_a_nodes_own_and_unused_shared_limits_are_refused(tmp_path):
    """A remote distance below the local one was modelled at local latency and counted remote; a shared
    bandwidth for a level of private caches was taken and read by nothing (an outside-user campaign)."""
    root = pathlib.Path(__file__).resolve().parents[2]
    xml = (root / "topologies" / "seed002-opteron-6172.xml").read_text()
    bad = tmp_path / "below.xml"  # hwloc reads a values element by its length attribute, in characters
    bad.write_text(xml.replace('<u64values length="30">10 16 16 22 16 22 16 22 16 10', '<u64values length="28">10 5 16 22 16 22 16 22 5 10', 1))
    run = subprocess.run([CACHESIM, "--topology", str(bad), "--generate", "stream", "--count", "10"],
                         capture_output=True, text=True)
    assert run.returncode == 2, run.stderr
    assert "the distance from NUMA node 0 to node 1 is 5, below node 0's own 10" in run.stderr, run.stderr
    good = subprocess.run([CACHESIM, "--topology", str(root / "topologies" / "seed002-opteron-6172.xml"), "--generate",
                           "stream", "--count", "10"], capture_output=True, text=True)
    assert good.returncode == 0, good.stderr
    private = subprocess.run([CACHESIM, "--topology", "pack:1 l2:2(size=1MiB) core:1 pu:1", "--params", "l2.shared_bw=10",
                              "--generate", "stream", "--count", "10"], capture_output=True, text=True)
    assert private.returncode == 2 and "l2.shared_bw: no L2 cache of" in private.stderr, private.stderr
    shared = subprocess.run([CACHESIM, "--topology", "pack:1 l2:1(size=1MiB) core:2 pu:1", "--params", "l2.shared_bw=10",
                             "--generate", "stream", "--count", "10"], capture_output=True, text=True)
    assert shared.returncode == 0, shared.stderr


def test_addresses_are_decimal_or_hex_never_octal(tmp_path):
    """A leading 0 is decimal (0200 was read as octal 128, and 09 was an error)."""
    trace = tmp_path / "t.txt"
    trace.write_text("R 0200 8\nR 128 8\nR 09 8\nR 0x40 8\n")  # lines 3, 2, 0, 1: four misses
    out = subprocess.run([CACHESIM, "--level", "size=1KiB,ways=2", "--trace", str(trace)], check=True,
                         capture_output=True, text=True).stdout
    cache = json.loads(out)["caches"][0]
    assert (cache["hits"], cache["misses"]) == (0, 4)


def test_trace_and_machine_mistakes_are_one_line_errors(tmp_path):
    trace = tmp_path / "t.txt"
    trace.write_text("R 0 8\n")
    extra = tmp_path / "extra.txt"
    extra.write_text("R 0 8\nR 64 8 0 extra\n")
    bad_field = tmp_path / "bad_field.txt"
    bad_field.write_text("R zz 8\n")
    # An access that starts below 2^56 and ends above it walked 16 million lines up there (an outside-user
    # campaign); a bad PU's message read "t.txt:2 PU=..." where every other says "t.txt:2: ...".
    past_end = tmp_path / "past_end.txt"
    past_end.write_text("R 0xffffffffffffc0 1073741824\n")
    bad_pu = tmp_path / "bad_pu.txt"
    bad_pu.write_text("R 0 8\nR 0x1000 8 -1\n")
    cases = [(["--level", "size=256,ways=1", "--trace", str(tmp_path)], "a directory, not a trace file"),
             (["--level", "size=256,ways=1", "--pus", "5", "--generate", "stream", "--count", "10"], "one PU"),
             (["--level", "size=256,ways=1", "--params", "l1.ways=3", "--trace", str(trace)], "give it in one place"),
             # A misspelt parameter gets the closest name, as ROOST_SIM_PARAMS does.
             (["--level", "size=256,ways=1", "--params", "l1.way=3", "--trace", str(trace)],
              "unknown parameter 'l1.way' in 'l1.way=3'; did you mean l1.ways? valid names:"),
             # A parameter of a level no --level gives was taken and changed nothing.
             (["--level", "size=256,ways=1", "--params", "l2.ways=4", "--trace", str(trace)],
              "l2.ways=4: the --level geometry has no L2 cache"),
             (["--level", "size=256,ways=1", "--line", "512", "--trace", str(trace)], "smaller than one line"),
             # The line size is --line's, and its error names it (it named --level).
             (["--level", "size=256,ways=1", "--line", "48", "--trace", str(trace)],
              "--line 48: must be a power of two from 1 to 4096 bytes"),
             (["--level", "size=256,ways=1", "--trace", str(extra)], "unexpected 'extra'"),
             (["--level", "size=256,ways=1", "--trace", str(past_end)],
              "past_end.txt:1: the access at 0xffffffffffffc0 of 1073741824 bytes must end at or below 2^56"),
             (["--level", "size=256,ways=1", "--trace", str(bad_pu)], "bad_pu.txt:2: PU='-1': must be a non-negative"),
             (["--level", "size=256,ways=1", "--trace", str(bad_field)], "bad_field.txt:1: address='zz'"),
             (["--level", "size=256,ways=1", "--generate", "stream", "--count", "99999999999999999999"],
              "'99999999999999999999': too large"),
             (["--topology", "pack:1 l2:1(size=1KiB) core:2 pu:1", "--pus", "3", "--generate", "stream", "--count",
               "10"], "must be 1 to 2 (the topology's PUs)"),
             # An option the input does not read, and a count that cannot be held (it aborted).
             (["--level", "size=256,ways=1", "--pu", "0", "--generate", "stream", "--count", "10"], "--pu is read with --trace"),
             (["--level", "size=256,ways=1", "--trace", str(trace), "--count", "5"], "--count is read with --generate"),
             (["--topology", "pack:1 l2:1(size=1KiB) core:2 pu:1", "--line", "128", "--trace", str(trace)],
              "--line is read with --level"),
             (["--level", "size=256,ways=1", "--generate", "stream", "--count", "0xffffffffffffffff"], "at most 4294967296")]
    # A write fraction is a decimal number in [0, 1]: "-0", a hexadecimal one and a leading '+' were taken.
    for bad in ("-0", "0x0.8", "+0.5", " 0.5", "nan", "1.5", ""):
        cases.append((["--level", "size=256,ways=1", "--generate", "stream", "--count", "10", "--write-fraction", bad],
                      "--write-fraction '" + bad + "': must be a number in [0, 1]"))
    for args, why in cases:
        run = subprocess.run([CACHESIM, *args], capture_output=True, text=True)
        assert run.returncode == 2 and why in run.stderr, (args, run.stderr)
    # A trace's own content is not a usage mistake: its line, without the usage text.
    for trace_file in (extra, bad_field, past_end, bad_pu):
        run = subprocess.run([CACHESIM, "--level", "size=256,ways=1", "--trace", str(trace_file)], capture_output=True,
                             text=True)
        assert run.returncode == 2 and "usage:" not in run.stderr and run.stderr.count("\n") == 1, run.stderr


def test_a_level_names_its_missing_or_wrong_item(tmp_path):
    """ways=4294967298 was narrowed to 32 bits unchecked and ran a 2-way cache; size=0 and ways=0 shared one
    message that named neither."""
    trace = tmp_path / "t.txt"
    trace.write_text("R 0 8\n")
    cases = [("size=1KiB,ways=4294967298", "--level 'size=1KiB,ways=4294967298' ways=4294967298: must be 1 to 1024"),
             ("size=1KiB,ways=1025", "ways=1025: must be 1 to 1024"),
             ("size=1KiB,ways=0", "ways=0: must be 1 to 1024"),
             ("size=0,ways=8", "size=0: must be at least one line"),
             ("size=1KiB", "needs ways=N (1 to 1024)"),
             ("ways=8", "needs size=BYTES (at least one line)")]
    for level, why in cases:
        run = subprocess.run([CACHESIM, "--level", level, "--trace", str(trace)], capture_output=True, text=True)
        assert run.returncode == 2 and why in run.stderr, (level, run.stderr)


def test_a_setting_given_twice_or_an_empty_pair_is_refused_not_last_wins(tmp_path):
    """Each of these ran with the last value, or dropped the empty pair, without a word (an outside-user campaign);
    ROOST_SIM_PARAMS refuses them all."""
    trace = tmp_path / "t.txt"
    trace.write_text("R 0 8\n")
    topo = ["--topology", "l3:1(size=1MiB) core:2 pu:1", "--trace", str(trace)]
    cases = [(["--params", "l3.ways=8 l3.ways=16", *topo], "'l3.ways' is given twice"),
             (["--params", "l3.ways=8,l3.ways=16", *topo], "'l3.ways' is given twice"),
             (["--params", "l3.ways=8,,preset=generic", *topo], "an empty pair"),
             (["--params", ",l3.ways=8", *topo], "an empty pair"),
             (["--params", "l3.ways=8,", *topo], "an empty pair"),
             (["--params", "", *topo], "--params '': names no parameter"),
             (["--level", "size=32KiB,ways=8,ways=4", "--trace", str(trace)], "ways is given twice"),
             (["--mode", "roost", "--mode", "pycachesim", *topo], "--mode is given twice"),
             (["--mode", "pycachesim", "--params", "mode=roost", *topo], "give it in one place"),
             (["--mode", "bogus", *topo], "--mode 'bogus': must be roost or pycachesim"),
             (["--level", "size=256,ways=1", "--generate", "stream", "--count", "10", "--count", "20"],
              "--count is given twice"),
             # An end comma of one --params is an empty pair too, beside another --params.
             (["--params", "l3.ways=8,", "--params", "host_threads=1", *topo], "an empty pair"),
             (["--params", "l3.ways=8", "--params", ",host_threads=1", *topo], "an empty pair")]
    for args, why in cases:
        run = subprocess.run([CACHESIM, *args], capture_output=True, text=True)
        assert run.returncode == 2 and why in run.stderr, (args, run.stderr)
    # Spaces and a comma together still separate two pairs; --params given twice adds to the first.
    for params in (["--params", "l3.ways=8 , preset=generic"], ["--params", "l3.ways=8", "--params", "host_threads=1"],
                   ["--params", "l3.ways=8", "--mode", "PyCacheSim"]):  # words in any case
        ok = subprocess.run([CACHESIM, *params, *topo], capture_output=True, text=True)
        assert ok.returncode == 0 and "8-way" in json.loads(ok.stdout)["geometry"], (params, ok.stderr)


def test_inputs_it_cannot_read_and_outputs_it_cannot_write_are_errors(tmp_path):
    """A ROOST_TRACE file was read as text up to a control byte; a standard output that could not take the JSON
    (its only output) exited 0. A pipe with a writer is read as it comes."""
    level = ["--level", "size=32KiB,ways=8"]
    binary = tmp_path / "run.trace"
    binary.write_bytes(b"ROOSTTRC" + bytes(64))
    run = subprocess.run([CACHESIM, *level, "--trace", str(binary)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and "roost task trace" in run.stderr and "roost-analyze" in run.stderr
    run = subprocess.run([CACHESIM, *level, "--trace", "/dev/stdin"], input="R 0 8\nR 0 8\n", capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 0 and json.loads(run.stdout)["caches"][0]["hits"] == 1, run.stderr
    trace = tmp_path / "t.txt"
    trace.write_text("R 0 8\n")
    with open("/dev/full", "w") as full:
        run = subprocess.run([CACHESIM, *level, "--trace", str(trace)], stdout=full, stderr=subprocess.PIPE,
                             text=True, timeout=60)
    assert run.returncode == 1 and "standard output" in run.stderr
